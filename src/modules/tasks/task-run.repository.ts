import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, IsNull, LessThan, Not, QueryDeepPartialEntity } from 'typeorm';
import { execSql } from '@core/database/sql';
import { Lease } from '@core/lease';
import { ACTIVE_RUN_STATUSES, RunStatus } from './run-status';
import { TaskRunEntity } from './task-run.entity';

/** Arbitrary fixed key: serialises claims when GATEWAY_TASK_MAX_CONCURRENT caps running runs. */
const CONCURRENCY_LOCK_KEY = 726_354_105;

export interface ClaimResult {
  run: TaskRunEntity;
  /** `running` when this claim took over an expired lease. */
  previousStatus: RunStatus;
  previousOwner: string | null;
}

export type ClaimRefusal = { reason: 'not_found' | 'not_claimable' | 'lease_held' | 'at_capacity'; run: TaskRunEntity | null; leaseRemainingMs?: number };

/** The run lease (docs/design.md §4.4): held while the run is `running`. */
export const RUN_LEASE = new Lease({
  table: 'task_runs',
  id: 'id',
  owner: 'lease_owner',
  token: 'lease_token',
  expiresAt: 'lease_expires_at',
  heldWhere: "status = 'running'",
});

/** RUN_LEASE's columns cleared, as entity fields for TypeORM's update builder (RUN_LEASE.clearSet in SQL). */
const LEASE_RELEASED = { leaseOwner: null, leaseToken: null, leaseExpiresAt: null } satisfies Partial<TaskRunEntity>;

@Injectable()
export class TaskRunRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(TaskRunEntity);
  }

  async insert(manager: EntityManager, row: TaskRunEntity): Promise<void> {
    await this.repo(manager).insert(row as QueryDeepPartialEntity<TaskRunEntity>);
  }

  find(tenantId: string, taskId: string, runId: string, manager?: EntityManager): Promise<TaskRunEntity | null> {
    return this.repo(manager).findOne({ where: { tenantId, taskId, id: runId } });
  }

  findById(tenantId: string, runId: string, manager?: EntityManager): Promise<TaskRunEntity | null> {
    return this.repo(manager).findOne({ where: { tenantId, id: runId } });
  }

  list(tenantId: string, taskId: string): Promise<TaskRunEntity[]> {
    return this.repo().find({ where: { tenantId, taskId }, order: { number: 'ASC' } });
  }

  active(manager: EntityManager | undefined, tenantId: string, taskId: string): Promise<TaskRunEntity | null> {
    return this.repo(manager).findOne({ where: { tenantId, taskId, status: In([...ACTIVE_RUN_STATUSES]) } });
  }

  async nextNumber(manager: EntityManager, taskId: string): Promise<number> {
    const { rows } = await execSql<{ n: number }>(manager, `SELECT COALESCE(MAX(number), 0) + 1 AS n FROM task_runs WHERE task_id = $1`, [taskId]);
    return Number(rows[0].n);
  }

  /** Row-locks the run for the rest of the transaction and returns its current state. */
  async lock(manager: EntityManager, tenantId: string, runId: string): Promise<TaskRunEntity | null> {
    return this.repo(manager)
      .createQueryBuilder('r')
      .setLock('pessimistic_write')
      .where('r.tenant_id = :tenantId AND r.id = :runId', { tenantId, runId })
      .getOne();
  }

  /**
   * Applies `set` when the run is still in one of `from`; returns whether it did. `releaseLease` gives the run's lease
   * up in the same statement (every transition out of `running`).
   */
  async transition(
    manager: EntityManager,
    q: { tenantId: string; runId: string; from: RunStatus[]; set: Record<string, unknown>; releaseLease?: boolean; leaseToken?: string },
  ): Promise<boolean> {
    const builder = manager
      .createQueryBuilder()
      .update(TaskRunEntity)
      .set({ ...q.set, ...(q.releaseLease ? LEASE_RELEASED : {}), updatedAt: () => 'now()' })
      .where('tenant_id = :tenantId AND id = :runId AND status IN (:...from)', { tenantId: q.tenantId, runId: q.runId, from: q.from });
    // Only while this holder still has the lease (a hand-over never moves a run another worker took).
    if (q.leaseToken !== undefined) builder.andWhere('lease_token = :token', { token: q.leaseToken });
    const result = await builder.execute();
    return (result.affected ?? 0) > 0;
  }

  /**
   * Takes the run's lease with compare-and-set in database time: a queued run, or a running run whose
   * lease expired. With `maxConcurrent > 0` the running count is checked under an advisory lock.
   */
  async claim(
    manager: EntityManager,
    q: { tenantId: string; runId: string; owner: string; token: string; leaseMs: number; maxConcurrent: number },
  ): Promise<ClaimResult | ClaimRefusal> {
    if (q.maxConcurrent > 0) await execSql(manager, `SELECT pg_advisory_xact_lock($1)`, [CONCURRENCY_LOCK_KEY]);
    // Row-locked first, so the refusal reasons and the previous owner describe the state the claim replaced.
    const { rows } = await execSql<{ status: RunStatus; lease_owner: string | null; remaining_ms: number | null; expired: boolean }>(
      manager,
      `SELECT status, lease_owner, ${RUN_LEASE.remainingMsSql} AS remaining_ms, ${RUN_LEASE.expiredSql} AS expired
         FROM task_runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
      [q.tenantId, q.runId],
    );
    const current = rows[0];
    if (!current) return { reason: 'not_found', run: null };
    const held = async (): Promise<ClaimRefusal> => ({
      reason: 'lease_held',
      run: await this.findById(q.tenantId, q.runId, manager),
      leaseRemainingMs: Number(current.remaining_ms ?? 0),
    });
    if (current.status === 'running' && !current.expired) return held();
    if (current.status !== 'queued' && current.status !== 'running') return { reason: 'not_claimable', run: await this.findById(q.tenantId, q.runId, manager) };
    if (q.maxConcurrent > 0 && current.status === 'queued') {
      const running = await execSql<{ n: number }>(manager, `SELECT count(*)::int AS n FROM task_runs WHERE ${RUN_LEASE.liveSql}`);
      if (Number(running.rows[0].n) >= q.maxConcurrent) return { reason: 'at_capacity', run: null };
    }
    const claimed = await RUN_LEASE.claim(
      manager,
      q.runId,
      q.owner,
      q.token,
      q.leaseMs,
      `status IN ('queued', 'running')`,
      `status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()), updated_at = now()`,
    );
    if (!claimed) return held();
    const run = (await this.findById(q.tenantId, q.runId, manager))!;
    return { run, previousStatus: current.status, previousOwner: current.lease_owner };
  }

  /** Extends the lease if this token still owns the running run. */
  heartbeat(runId: string, token: string, leaseMs: number): Promise<boolean> {
    return RUN_LEASE.heartbeat(this.dataSource.manager, runId, token, leaseMs);
  }

  /**
   * The guard at the start of every worker transaction: locks the run row and proves the token still
   * owns it. False means the lease was taken over or the run was cancelled.
   */
  guard(manager: EntityManager, runId: string, token: string): Promise<boolean> {
    return RUN_LEASE.guard(manager, runId, token, 'updated_at = now()');
  }

  /** Running runs whose lease expired (reconciler), row-locked (SKIP LOCKED: concurrent reconcilers split them). */
  async lockExpired(manager: EntityManager, limit: number): Promise<TaskRunEntity[]> {
    return this.byIds(manager, await RUN_LEASE.lockExpired(manager, limit));
  }

  /** Running runs owned by anyone but `owner` (embedded boot: those belonged to a process that is gone), row-locked. */
  async lockRunningNotOwnedBy(manager: EntityManager, owner: string, limit: number): Promise<TaskRunEntity[]> {
    return this.byIds(manager, await RUN_LEASE.lockHeldByOthers(manager, owner, limit));
  }

  private async byIds(manager: EntityManager, ids: string[]): Promise<TaskRunEntity[]> {
    return ids.length === 0 ? [] : this.repo(manager).find({ where: { id: In(ids) } });
  }

  /** Queued runs not (re-)enqueued since `before` — enqueue is idempotent by job id. */
  queuedNeedingEnqueue(before: Date, limit: number): Promise<TaskRunEntity[]> {
    return this.repo().find({
      where: [
        { status: 'queued', enqueuedAt: IsNull() },
        { status: 'queued', enqueuedAt: LessThan(before) },
      ],
      order: { queuedAt: 'ASC' },
      take: limit,
    });
  }

  async markEnqueued(runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.repo().update({ id: In(runIds) }, { enqueuedAt: () => 'now()' });
  }

  async oldestQueued(limit: number): Promise<TaskRunEntity[]> {
    return this.repo().find({ where: { status: 'queued' }, order: { queuedAt: 'ASC' }, take: limit });
  }

  async statusCounts(): Promise<Record<string, number>> {
    const { rows } = await execSql<{ status: string; n: number }>(
      this.dataSource.manager,
      `SELECT status, count(*)::int AS n FROM task_runs WHERE status IN ('queued', 'awaiting_approval', 'running') GROUP BY status`,
    );
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  async queueFacts(): Promise<{ oldestQueuedAgeMs: number | null; liveWorkers: number }> {
    const { rows } = await execSql<{ age_ms: number | null; workers: number }>(
      this.dataSource.manager,
      `SELECT (SELECT (EXTRACT(EPOCH FROM (now() - min(queued_at))) * 1000)::bigint FROM task_runs WHERE status = 'queued') AS age_ms,
              (SELECT count(DISTINCT lease_owner)::int FROM task_runs WHERE ${RUN_LEASE.liveSql}) AS workers`,
    );
    return { oldestQueuedAgeMs: rows[0].age_ms === null ? null : Number(rows[0].age_ms), liveWorkers: Number(rows[0].workers) };
  }

  async idsOfTask(manager: EntityManager, tenantId: string, taskId: string): Promise<string[]> {
    const rows = await this.repo(manager).find({ where: { tenantId, taskId }, select: { id: true } });
    return rows.map((r) => r.id);
  }

  async activeIds(): Promise<string[]> {
    const rows = await this.repo().find({ where: { status: In([...ACTIVE_RUN_STATUSES]) }, select: { id: true } });
    return rows.map((r) => r.id);
  }

  async finishedWorkspaces(before: Date, limit: number): Promise<TaskRunEntity[]> {
    return this.repo().find({
      where: { finishedAt: LessThan(before), workspaceMode: Not('in_place') },
      order: { finishedAt: 'ASC' },
      take: limit,
    });
  }
}
