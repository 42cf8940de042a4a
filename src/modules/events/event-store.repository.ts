import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { randomHex } from '@core/context/random-hex';
import { PreparedStatement, queryPrepared } from '@core/database/prepared-statement';
import { execSql, isPglite } from '@core/database/sql';
import { storableJson } from '@core/database/storable';

export interface EventRow {
  id: string;
  tenant_id: string;
  run_id: string;
  task_id: string | null;
  session_id: string | null;
  sequence: number;
  type: string;
  data: Record<string, unknown>;
  occurred_at: Date;
  feed_cursor: number | null;
}

/** An event's position (sequence or feed cursor) and the size of its `data` as JSON text. */
export interface EventSize {
  pos: number;
  bytes: number;
}

/** A replayed row: `data` is null when it was left out for its size (`data_bytes`). */
export type ReplayRow = Omit<EventRow, 'data'> & { data: Record<string, unknown> | null; data_bytes: number };

export interface NewEventRow {
  tenantId: string;
  runId: string;
  taskId: string | null;
  sessionId: string | null;
  type: string;
  data: Record<string, unknown>;
  requestId: string | null;
  traceId: string | null;
}

/** A piece of SQL with its own parameters, numbered from $1. */
export interface SqlFragment {
  sql: string;
  params: unknown[];
}

export interface FeedFilter {
  tenantId: string;
  types?: string[];
  taskId?: string;
}

const COLUMNS = 'id, tenant_id, run_id, task_id, session_id, sequence, type, data, occurred_at, feed_cursor';

/** The columns of a replay read; `$5` is the size over which `data` is left out. */
const REPLAY_COLUMNS =
  'id, tenant_id, run_id, task_id, session_id, sequence, type, CASE WHEN octet_length(data::text) > $5 THEN NULL ELSE data END AS data, ' +
  'occurred_at, feed_cursor, octet_length(data::text) AS data_bytes';

/** The WHERE of a feed read ($1 tenant, $2 after, $3 up to, then the filters). */
function feedWhere(filter: FeedFilter, after: number, upTo: number): { where: string; params: unknown[] } {
  const params: unknown[] = [filter.tenantId, after, upTo];
  let where = 'tenant_id = $1 AND feed_cursor > $2 AND feed_cursor <= $3';
  if (filter.types && filter.types.length > 0) {
    params.push(filter.types);
    where += ` AND type = ANY($${params.length}::text[])`;
  }
  if (filter.taskId) {
    params.push(filter.taskId);
    where += ` AND task_id = $${params.length}`;
  }
  return { where, params };
}

export const newEventId = (): string => `evt_${randomHex(12)}`;

/**
 * appendGuarded's statements, prepared (parsed and planned once per connection; the step write's CTEs cost more to
 * plan than to run). Their texts vary only with the shape of the write (which rows, how many artifacts), not with
 * values, so there are few; the bound keeps a caller that varied the text from preparing without limit.
 */
const guardedStatements = new Map<string, PreparedStatement>();
const MAX_GUARDED_STATEMENTS = 256;

function guardedStatement(sql: string): PreparedStatement | undefined {
  let statement = guardedStatements.get(sql);
  if (!statement && guardedStatements.size < MAX_GUARDED_STATEMENTS) {
    statement = new PreparedStatement(sql);
    guardedStatements.set(sql, statement);
  }
  return statement;
}

/** Storage of run events, per-run sequence heads and the public-feed cursor head. */
@Injectable()
export class EventStoreRepository {
  /**
   * PGlite (embedded mode) has one connection: statements run one at a time and each commits before the next starts,
   * so a statement that moves the feed head itself gives its events cursors in the order readers can see them (what
   * the stamper's head lock ensures on Postgres, where writers commit concurrently and a head lock held through
   * every writer's transaction would serialise them all). Embedded step writes then need no stamping call.
   */
  readonly stampsInline: boolean;

  constructor(private readonly dataSource: DataSource) {
    this.stampsInline = isPglite(dataSource);
  }

  transaction<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(fn);
  }

  /**
   * Appends one event in the caller's transaction. The per-run sequence comes from event_stream_heads
   * under its row lock, so concurrent appenders to one run are serialised and commit in sequence order.
   */
  async append(manager: EntityManager, e: NewEventRow): Promise<EventRow> {
    const { rows } = await execSql<EventRow>(
      manager,
      `WITH head AS (
         INSERT INTO event_stream_heads AS h (run_id, tenant_id, last_sequence) VALUES ($2, $3, 1)
         ON CONFLICT (run_id) DO UPDATE SET last_sequence = h.last_sequence + 1
         RETURNING last_sequence
       )
       INSERT INTO task_run_events (id, tenant_id, run_id, task_id, session_id, sequence, type, data, request_id, trace_id)
       SELECT $1, $3, $2, $4, $5, head.last_sequence, $6, $7::jsonb, $8, $9 FROM head
       RETURNING ${COLUMNS}`,
      [newEventId(), e.runId, e.tenantId, e.taskId, e.sessionId, e.type, storableJson(e.data), e.requestId, e.traceId],
    );
    return rows[0];
  }

  /**
   * Appends several events of one run in one statement (consecutive sequences, in the given order): what a step's
   * dispatch or result transaction writes, without a round trip per event.
   */
  async appendMany(manager: EntityManager, run: Omit<NewEventRow, 'type' | 'data'>, events: Array<Pick<NewEventRow, 'type' | 'data'>>): Promise<EventRow[]> {
    if (events.length === 0) return [];
    const appended = eventsSql(run, events, '');
    const { rows } = await execSql<EventRow>(manager, `WITH ${appended.sql} SELECT * FROM ev`, appended.params);
    return rows.sort((a, b) => Number(a.sequence) - Number(b.sequence));
  }

  /**
   * One statement, committed on its own (no transaction round trips): the `guard` (a statement returning a row only
   * while the writer holds its lease), the `writes` (data-modifying statements, each made conditional on the guard by
   * reading `FROM g` or `WHERE EXISTS (SELECT 1 FROM g)`), and the run's events (≥ 1, consecutive sequences, in order).
   * Every fragment numbers its own parameters from $1. Null when the guard found no row: then nothing was written.
   */
  async appendGuarded(
    guard: SqlFragment,
    writes: SqlFragment[],
    run: Omit<NewEventRow, 'type' | 'data'>,
    events: Array<Pick<NewEventRow, 'type' | 'data'>>,
  ): Promise<EventRow[] | null> {
    if (events.length === 0) throw new Error('appendGuarded needs at least one event (its rows prove the guard held)');
    const params: unknown[] = [];
    const place = (f: SqlFragment): string => {
      const offset = params.length;
      params.push(...f.params);
      return f.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    };
    const ctes = [`g AS (${place(guard)})`, ...writes.map((w, i) => `w${i} AS (${place(w)})`)];
    const appended = place(eventsSql(run, events, 'FROM g', this.stampsInline));
    const sql = `WITH ${[...ctes, appended].join(',\n')}\nSELECT * FROM ev`;
    const statement = guardedStatement(sql);
    const rows = statement
      ? ((await queryPrepared(this.dataSource, statement, params)) as unknown as EventRow[])
      : (await execSql<EventRow>(this.dataSource.manager, sql, params)).rows;
    if (rows.length === 0) return null;
    return rows.sort((a, b) => Number(a.sequence) - Number(b.sequence));
  }

  async listRun(q: { tenantId: string; runId: string; afterSequence: number; limit: number }): Promise<EventRow[]> {
    const { rows } = await execSql<EventRow>(
      this.dataSource.manager,
      `SELECT ${COLUMNS} FROM task_run_events
        WHERE tenant_id = $1 AND run_id = $2 AND sequence > $3
        ORDER BY sequence LIMIT $4`,
      [q.tenantId, q.runId, q.afterSequence, q.limit],
    );
    return rows;
  }

  async lastSequence(tenantId: string, runId: string): Promise<number> {
    const { rows } = await execSql<{ last_sequence: number }>(
      this.dataSource.manager,
      `SELECT last_sequence FROM event_stream_heads WHERE run_id = $1 AND tenant_id = $2`,
      [runId, tenantId],
    );
    return rows[0]?.last_sequence ?? 0;
  }

  async feedHead(): Promise<number> {
    const { rows } = await execSql<{ last_cursor: number }>(this.dataSource.manager, `SELECT last_cursor FROM event_feed_head WHERE id = 1`);
    return rows[0]?.last_cursor ?? 0;
  }

  /** Stamped events of a tenant with after < cursor <= upTo, in cursor order. */
  async listFeed(filter: FeedFilter, after: number, upTo: number, limit: number): Promise<EventRow[]> {
    const { where, params } = feedWhere(filter, after, upTo);
    params.push(limit);
    const { rows } = await execSql<EventRow>(
      this.dataSource.manager,
      `SELECT ${COLUMNS} FROM task_run_events WHERE ${where} ORDER BY feed_cursor LIMIT $${params.length}`,
      params,
    );
    return rows;
  }

  /**
   * Stream replay, first read: the size of each next event's `data` (as JSON text), so a page is cut to a byte budget
   * before any payload reaches this process.
   */
  async runSizes(q: { tenantId: string; runId: string; afterSequence: number; limit: number }): Promise<EventSize[]> {
    const { rows } = await execSql<EventSize>(
      this.dataSource.manager,
      `SELECT sequence AS pos, octet_length(data::text) AS bytes FROM task_run_events
        WHERE tenant_id = $1 AND run_id = $2 AND sequence > $3
        ORDER BY sequence LIMIT $4`,
      [q.tenantId, q.runId, q.afterSequence, q.limit],
    );
    return rows.map((r) => ({ pos: Number(r.pos), bytes: Number(r.bytes) }));
  }

  /** Stream replay, second read: the events through `through`, the `data` of one over `omitOver` bytes left out (null). */
  async readRun(q: { tenantId: string; runId: string; afterSequence: number; through: number; omitOver: number }): Promise<ReplayRow[]> {
    const { rows } = await execSql<ReplayRow>(
      this.dataSource.manager,
      `SELECT ${REPLAY_COLUMNS} FROM task_run_events
        WHERE tenant_id = $1 AND run_id = $2 AND sequence > $3 AND sequence <= $4
        ORDER BY sequence`,
      [q.tenantId, q.runId, q.afterSequence, q.through, q.omitOver],
    );
    return rows;
  }

  /** `runSizes` for the public feed. */
  async feedSizes(filter: FeedFilter, after: number, upTo: number, limit: number): Promise<EventSize[]> {
    const { where, params } = feedWhere(filter, after, upTo);
    params.push(limit);
    const { rows } = await execSql<EventSize>(
      this.dataSource.manager,
      `SELECT feed_cursor AS pos, octet_length(data::text) AS bytes FROM task_run_events WHERE ${where} ORDER BY feed_cursor LIMIT $${params.length}`,
      params,
    );
    return rows.map((r) => ({ pos: Number(r.pos), bytes: Number(r.bytes) }));
  }

  /** `readRun` for the public feed. */
  async readFeed(filter: FeedFilter, after: number, through: number, omitOver: number): Promise<ReplayRow[]> {
    const { where, params } = feedWhere(filter, after, through);
    params.push(omitOver);
    const columns = REPLAY_COLUMNS.replaceAll('$5', `$${params.length}`);
    const { rows } = await execSql<ReplayRow>(this.dataSource.manager, `SELECT ${columns} FROM task_run_events WHERE ${where} ORDER BY feed_cursor`, params);
    return rows;
  }

  async hasUnstamped(): Promise<boolean> {
    const { rows } = await execSql(this.dataSource.manager, `SELECT 1 FROM task_run_events WHERE feed_cursor IS NULL LIMIT 1`);
    return rows.length > 0;
  }

  /**
   * Gives committed, unstamped events their public-feed cursors. The head row lock makes stampers take
   * turns; each statement after the lock sees every earlier stamper's commit, so cursors grow in the order
   * readers can see them and a reader polling `after_sequence=N` never misses a later, smaller cursor.
   */
  async stamp(limit: number): Promise<{ from: number; to: number; rows: EventRow[] }> {
    // One call (migration FeedStampFunction): the head lock, the stamping and the head move commit together.
    const { rows } = await execSql<EventRow>(this.dataSource.manager, `SELECT ${COLUMNS} FROM hecate_stamp_feed($1)`, [limit]);
    if (rows.length === 0) return { from: 0, to: -1, rows };
    for (const r of rows) r.feed_cursor = Number(r.feed_cursor);
    rows.sort((a, b) => (a.feed_cursor ?? 0) - (b.feed_cursor ?? 0));
    return { from: rows[0].feed_cursor!, to: rows[rows.length - 1].feed_cursor!, rows };
  }

  async deleteForTask(manager: EntityManager, tenantId: string, taskId: string, runIds: string[]): Promise<void> {
    await execSql(manager, `DELETE FROM task_run_events WHERE tenant_id = $1 AND task_id = $2`, [tenantId, taskId]);
    if (runIds.length > 0) {
      await execSql(manager, `DELETE FROM event_stream_heads WHERE tenant_id = $1 AND run_id = ANY($2::text[])`, [tenantId, runIds]);
    }
  }

  /**
   * Retention: deletes events older than `olderThan`, then everything beyond the newest `keepNewest`,
   * never touching the runs in `protectedRunIds` (active runs). Stream heads stay, so sequences never reuse.
   */
  async prune(q: { olderThan: Date; keepNewest: number; protectedRunIds: string[] }): Promise<number> {
    const byAge = await execSql(this.dataSource.manager, `DELETE FROM task_run_events WHERE occurred_at < $1 AND NOT (run_id = ANY($2::text[]))`, [
      q.olderThan,
      q.protectedRunIds,
    ]);
    const byCount = await execSql(
      this.dataSource.manager,
      `DELETE FROM task_run_events WHERE id IN (
         SELECT id FROM task_run_events WHERE NOT (run_id = ANY($2::text[]))
          ORDER BY occurred_at DESC OFFSET $1
       )`,
      [q.keepNewest, q.protectedRunIds],
    );
    return byAge.affected + byCount.affected;
  }
}

/**
 * The CTEs `head` (the run's sequence head moved by the number of events, under its row lock, so concurrent appenders
 * to one run are serialised and commit in sequence order) and `ev` (the events, consecutive sequences, in order,
 * returning their rows). `from` conditions them on an earlier CTE (`FROM g`).
 */
function eventsSql(run: Omit<NewEventRow, 'type' | 'data'>, events: Array<Pick<NewEventRow, 'type' | 'data'>>, from: string, stampInline = false): SqlFragment {
  // Stamped inline (PGlite only, see stampsInline): the feed head moves by the number of events in the same statement.
  const feed = stampInline
    ? `feed AS (
         UPDATE event_feed_head SET last_cursor = last_cursor + $3::bigint WHERE id = 1 AND EXISTS (SELECT 1 FROM head) RETURNING last_cursor
       ),`
    : '';
  return {
    sql: `head AS (
         INSERT INTO event_stream_heads AS h (run_id, tenant_id, last_sequence) SELECT $1, $2, $3::bigint ${from}
         ON CONFLICT (run_id) DO UPDATE SET last_sequence = h.last_sequence + $3::bigint
         RETURNING last_sequence
       ),
       ${feed}
       ev AS (
         INSERT INTO task_run_events (id, tenant_id, run_id, task_id, session_id, sequence, type, data, request_id, trace_id, feed_cursor)
         SELECT e.id, $2, $1, $4, $5, head.last_sequence - $3::bigint + e.ord, e.type, e.data::jsonb, $6, $7,
                ${stampInline ? 'feed.last_cursor - $3::bigint + e.ord' : 'NULL::bigint'}
           FROM head, ${stampInline ? 'feed, ' : ''}unnest($8::text[], $9::text[], $10::text[]) WITH ORDINALITY AS e(id, type, data, ord)
         RETURNING ${COLUMNS}
       )`,
    params: [
      run.runId,
      run.tenantId,
      events.length,
      run.taskId,
      run.sessionId,
      run.requestId,
      run.traceId,
      events.map(() => newEventId()),
      events.map((e) => e.type),
      events.map((e) => storableJson(e.data)),
    ],
  };
}
