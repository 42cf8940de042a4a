import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql, pruneByAgeAndCount } from '@core/database/sql';
import type { CatchUp } from './schedule-times';

export type ScheduleStatus = 'active' | 'paused' | 'completed';
export type FiringStatus = 'pending' | 'fired' | 'skipped' | 'failed';

/**
 * What a fire does: start a task made from `task` (the fields of `POST /hecate/v1/tasks`, MCP literal values sealed), or
 * queue a message into an Agent Chat session (started as the session's next turn once it is idle).
 */
export type ScheduleTarget =
  | { type: 'task'; task: Record<string, unknown> }
  | { type: 'agent_chat_message'; session_id: string; content: string; runtime_kind?: string; provider?: string; model?: string };

export interface ScheduleRow {
  id: string;
  tenant_id: string;
  name: string;
  kind: 'cron' | 'once';
  cron_expression: string | null;
  timezone: string;
  run_at: Date | null;
  starts_at: Date | null;
  ends_at: Date | null;
  max_fires: number | null;
  catch_up: CatchUp;
  catch_up_max: number;
  target: ScheduleTarget;
  host_paths: boolean;
  created_by: string;
  status: ScheduleStatus;
  next_fire_at: Date | null;
  fire_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface FiringRow {
  id: string;
  schedule_id: string;
  tenant_id: string;
  scheduled_for: Date;
  status: FiringStatus;
  claim_token: string | null;
  attempts: number;
  task_id: string | null;
  run_id: string | null;
  session_id: string | null;
  queue_item_id: string | null;
  /** The error envelope of a refused fire (`type`, `message`, and the details of the refusal), or the missed fire times' note. */
  error: { type: string; message: string; [detail: string]: unknown } | null;
  created_at: Date;
  finished_at: Date | null;
}

/** A pending firing with what firing it needs of its schedule. */
export type ClaimedFiring = FiringRow & Pick<ScheduleRow, 'target' | 'host_paths' | 'created_by'>;

/** How a firing ended: the status, what it started, or its error. */
export type Outcome = Pick<FiringRow, 'status' | 'error'> & Partial<Pick<FiringRow, 'task_id' | 'run_id' | 'session_id' | 'queue_item_id'>>;

export type NewFiring = Pick<FiringRow, 'id' | 'scheduled_for' | 'status' | 'error'>;

const FIRING_COLUMNS =
  'f.id, f.schedule_id, f.tenant_id, f.scheduled_for, f.status, f.claim_token, f.attempts, f.task_id, f.run_id, f.session_id, f.queue_item_id, f.error, f.created_at, f.finished_at';

/** The columns the API writes (create and update), in the order `written` gives their values. */
const WRITTEN = [
  'name',
  'kind',
  'cron_expression',
  'timezone',
  'run_at',
  'starts_at',
  'ends_at',
  'max_fires',
  'catch_up',
  'catch_up_max',
  'target',
  'status',
  'next_fire_at',
] as const satisfies ReadonlyArray<keyof ScheduleRow>;

const written = (row: Pick<ScheduleRow, (typeof WRITTEN)[number]>): unknown[] => WRITTEN.map((c) => (c === 'target' ? JSON.stringify(row.target) : row[c]));

/** Schedules and their firings. Every API read is scoped by tenant; the firer's reads are the cluster's due work. */
@Injectable()
export class SchedulesRepository {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(fn);
  }

  async insert(row: Omit<ScheduleRow, 'created_at' | 'updated_at' | 'fire_count'>): Promise<void> {
    await execSql(
      this.dataSource.manager,
      `INSERT INTO schedules (id, tenant_id, ${WRITTEN.join(', ')}, host_paths, created_by)
       VALUES ($1, $2, ${WRITTEN.map((c, i) => `$${i + 3}${c === 'target' ? '::jsonb' : ''}`).join(', ')}, $${WRITTEN.length + 3}, $${WRITTEN.length + 4})`,
      [row.id, row.tenant_id, ...written(row), row.host_paths, row.created_by],
    );
  }

  async find(tenantId: string, id: string, m: EntityManager = this.dataSource.manager): Promise<ScheduleRow | null> {
    const { rows } = await execSql<ScheduleRow>(m, `SELECT * FROM schedules WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return rows[0] ?? null;
  }

  async lock(m: EntityManager, tenantId: string, id: string): Promise<ScheduleRow | null> {
    const { rows } = await execSql<ScheduleRow>(m, `SELECT * FROM schedules WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, id]);
    return rows[0] ?? null;
  }

  /** Writes a locked schedule's definition and state back (the API's updates, pause and resume). */
  async save(m: EntityManager, row: ScheduleRow): Promise<void> {
    await execSql(
      m,
      `UPDATE schedules SET ${WRITTEN.map((c, i) => `${c} = $${i + 3}${c === 'target' ? '::jsonb' : ''}`).join(', ')}, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [row.tenant_id, row.id, ...written(row)],
    );
  }

  /** Newest first; `before`: the (created_at, id) of the previous page's last schedule. */
  async list(tenantId: string, limit: number, status: ScheduleStatus | undefined, before?: { at: Date; id: string }): Promise<ScheduleRow[]> {
    const { rows } = await execSql<ScheduleRow>(
      this.dataSource.manager,
      `SELECT * FROM schedules WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4)) ORDER BY created_at DESC, id DESC LIMIT $5`,
      [tenantId, status ?? null, before?.at ?? null, before?.id ?? '', limit],
    );
    return rows;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const { affected } = await execSql(this.dataSource.manager, `DELETE FROM schedules WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return affected > 0;
  }

  /** Newest fire time first; `before`: the previous page's last (scheduled_for, id). */
  async firings(tenantId: string, scheduleId: string, limit: number, before?: { at: Date; id: string }): Promise<FiringRow[]> {
    const { rows } = await execSql<FiringRow>(
      this.dataSource.manager,
      `SELECT ${FIRING_COLUMNS} FROM schedule_firings f WHERE f.tenant_id = $1 AND f.schedule_id = $2
          AND ($3::timestamptz IS NULL OR (f.scheduled_for, f.id) < ($3, $4)) ORDER BY f.scheduled_for DESC, f.id DESC LIMIT $5`,
      [tenantId, scheduleId, before?.at ?? null, before?.id ?? '', limit],
    );
    return rows;
  }

  /** Due active schedules, row-locked (another planner skips them), with the database's clock. */
  async lockDue(m: EntityManager, limit: number): Promise<{ now: Date; due: ScheduleRow[] }> {
    const { rows } = await execSql<ScheduleRow & { db_now: Date }>(
      m,
      `SELECT s.*, now() AS db_now FROM schedules s WHERE s.status = 'active' AND s.next_fire_at <= now()
        ORDER BY s.next_fire_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return { now: rows[0]?.db_now ?? new Date(), due: rows };
  }

  /**
   * A planned pass of one schedule, in the planner's transaction: its firings (pending ones claimed by `claim` until the
   * lease ends; a fire time already recorded is left alone) and its next fire time. Returns the pending firings written.
   */
  async recordPass(
    m: EntityManager,
    s: ScheduleRow,
    firings: NewFiring[],
    next: { at: Date | null; fired: number },
    claim: { owner: string; token: string; leaseSeconds: number },
  ): Promise<FiringRow[]> {
    let written: FiringRow[] = [];
    if (firings.length > 0) {
      ({ rows: written } = await execSql<FiringRow>(
        m,
        `INSERT INTO schedule_firings AS f (id, schedule_id, tenant_id, scheduled_for, status, error, claim_owner, claim_token, claim_until, attempts, finished_at)
         SELECT x.id, $1, $2, x.at, x.status, x.error::jsonb,
                CASE WHEN x.status = 'pending' THEN $3 END, CASE WHEN x.status = 'pending' THEN $4 END,
                CASE WHEN x.status = 'pending' THEN now() + make_interval(secs => $5) END,
                CASE WHEN x.status = 'pending' THEN 1 ELSE 0 END, CASE WHEN x.status = 'pending' THEN NULL ELSE now() END
           FROM unnest($6::text[], $7::timestamptz[], $8::text[], $9::text[]) AS x(id, at, status, error)
         ON CONFLICT (schedule_id, scheduled_for) DO NOTHING
         RETURNING ${FIRING_COLUMNS}`,
        [
          s.id,
          s.tenant_id,
          claim.owner,
          claim.token,
          claim.leaseSeconds,
          firings.map((f) => f.id),
          firings.map((f) => f.scheduled_for),
          firings.map((f) => f.status),
          firings.map((f) => (f.error ? JSON.stringify(f.error) : null)),
        ],
      ));
    }
    await execSql(
      m,
      `UPDATE schedules SET next_fire_at = $2, fire_count = fire_count + $3, status = CASE WHEN $2::timestamptz IS NULL THEN 'completed' ELSE status END,
              updated_at = now() WHERE id = $1`,
      [s.id, next.at, next.fired],
    );
    return written.filter((f) => f.status === 'pending');
  }

  /** Pending firings whose claim expired (their worker died or stalled), claimed for this one. */
  async reclaim(limit: number, claim: { owner: string; token: string; leaseSeconds: number }): Promise<ClaimedFiring[]> {
    const { rows } = await execSql<ClaimedFiring>(
      this.dataSource.manager,
      `WITH stale AS (
         SELECT id FROM schedule_firings WHERE status = 'pending' AND claim_until < now() ORDER BY claim_until LIMIT $1 FOR UPDATE SKIP LOCKED
       ), f AS (
         UPDATE schedule_firings t SET claim_owner = $2, claim_token = $3, claim_until = now() + make_interval(secs => $4), attempts = t.attempts + 1
           FROM stale WHERE t.id = stale.id RETURNING t.*
       )
       SELECT ${FIRING_COLUMNS}, s.target, s.host_paths, s.created_by FROM f JOIN schedules s ON s.id = f.schedule_id`,
      [limit, claim.owner, claim.token, claim.leaseSeconds],
    );
    return rows;
  }

  /** Ends a pending firing while `token` still holds its claim; false when another worker took it over meanwhile. */
  async finish(id: string, token: string, outcome: Outcome): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `UPDATE schedule_firings SET status = $3, task_id = $4, run_id = $5, session_id = $6, queue_item_id = $7, error = $8::jsonb, finished_at = now(),
              claim_until = NULL
        WHERE id = $1 AND claim_token = $2 AND status = 'pending'`,
      [
        id,
        token,
        outcome.status,
        outcome.task_id ?? null,
        outcome.run_id ?? null,
        outcome.session_id ?? null,
        outcome.queue_item_id ?? null,
        outcome.error ? JSON.stringify(outcome.error) : null,
      ],
    );
    return affected > 0;
  }

  /** Retention: ended firings (fired, skipped, failed) older than `olderThan`, then beyond the newest `keepNewest`; never a pending one. */
  async prune(olderThan: Date, keepNewest: number): Promise<number> {
    return pruneByAgeAndCount(this.dataSource.manager, { table: 'schedule_firings', keep: "status = 'pending'" }, olderThan, keepNewest);
  }
}
