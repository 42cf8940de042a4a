import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { randomHex } from '@core/context/random-hex';
import { execSql } from '@core/database/sql';
import { MetricsService } from '@core/metrics/metrics.service';
import type { ApprovalRow, ApprovalRuntime, Resolution, TaskApprovalRow, TurnApprovalRow } from './approval-rows';
import type { ApprovalStatus } from './approval-vocabulary';

export type NewTurnApproval = Pick<
  TurnApprovalRow,
  'tenant_id' | 'session_id' | 'turn_id' | 'adapter_id' | 'workspace' | 'tool_call_id' | 'tool_kind' | 'tool_name' | 'options' | 'scope_choices'
>;

/**
 * Which pending approvals a settlement takes: these ids, every pending one of a run, or the External Agent turns'
 * requests nobody waits for any more (the turn they block is not running under its waiter's live lease).
 */
export type SettleWhere = { ids: string[]; tenantId?: string } | { runId: string; tenantId: string } | { orphans: true };

const ORPHANED = `runtime = 'agent_chat_turn' AND created_at < now() - interval '1 second' AND $9::text IS NULL AND $10::text IS NULL
  AND NOT EXISTS (SELECT 1 FROM agent_chat_turns t
                   WHERE t.id = approvals.turn_id AND t.status = 'running' AND t.lease_owner = approvals.waiter AND t.lease_expires_at > now())`;

/**
 * The one approvals store (`approvals`, migration 1796800000000): the rows of every runtime that asks (`runtime`), and
 * the one way a pending row is decided — `settle`, a conditional UPDATE on `status = 'pending'`, so an operator's
 * decision, a timeout, a cancelled request or run, and the reconcile pass cannot both win; each settled row's wait is
 * measured there.
 */
@Injectable()
export class ApprovalsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
  ) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Settles the pending rows `where` names (rows no longer pending are left as they are); returns the ones it settled. */
  async settle(m: EntityManager, where: SettleWhere, r: Resolution): Promise<ApprovalRow[]> {
    const target =
      'ids' in where
        ? `id IN (SELECT jsonb_array_elements_text($9::jsonb)) AND ($10::text IS NULL OR tenant_id = $10)`
        : 'runId' in where
          ? `run_id = $9 AND tenant_id = $10`
          : ORPHANED;
    const { rows } = await execSql<ApprovalRow>(
      m,
      `UPDATE approvals SET status = $1, path = $2, decision = $3, scope = $4, selected_option = $5, grant_id = $6, note = $7, resolved_by = $8,
              resolved_at = now()
        WHERE status = 'pending' AND ${target} RETURNING *`,
      [
        r.status,
        r.path ?? null,
        r.decision ?? null,
        r.scope ?? null,
        r.selected_option ?? null,
        r.grant_id ?? null,
        r.note ?? '',
        r.resolved_by ?? '',
        'ids' in where ? JSON.stringify(where.ids) : 'runId' in where ? where.runId : null,
        'orphans' in where ? null : (where.tenantId ?? null),
      ],
    );
    for (const a of rows) this.observeWait(a);
    return rows;
  }

  /** One request settled: `settle` for one id; null when it was no longer pending (someone else settled it first). */
  async resolve(id: string, r: Resolution, m: EntityManager = this.manager): Promise<TurnApprovalRow | null> {
    const [row] = await this.settle(m, { ids: [id] }, r);
    return (row as TurnApprovalRow | undefined) ?? null;
  }

  private observeWait(a: ApprovalRow): void {
    const outcome = a.status === 'rejected' ? 'denied' : a.status;
    if (outcome === 'pending') return;
    this.metrics.approvalResolved(a.runtime === 'task_run' ? 'task' : 'agent_chat', outcome, a.created_at, a.resolved_at);
  }

  async countPending(runtime: ApprovalRuntime): Promise<number> {
    const { rows } = await execSql<{ n: string }>(this.manager, `SELECT count(*) AS n FROM approvals WHERE status = 'pending' AND runtime = $1`, [runtime]);
    return Number(rows[0]?.n ?? 0);
  }

  /** The tenant's pending approvals of one runtime, oldest first (the partial index `approvals_pending`). */
  async listPending<K extends ApprovalRuntime>(runtime: K, tenantId: string, limit: number): Promise<Array<Extract<ApprovalRow, { runtime: K }>>> {
    const { rows } = await execSql<Extract<ApprovalRow, { runtime: K }>>(
      this.manager,
      `SELECT * FROM approvals WHERE status = 'pending' AND runtime = $1 AND tenant_id = $2 ORDER BY created_at, id LIMIT $3`,
      [runtime, tenantId, limit],
    );
    return rows;
  }

  async byId(id: string): Promise<ApprovalRow | null> {
    const { rows } = await execSql<ApprovalRow>(this.manager, `SELECT * FROM approvals WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  // A task run's gates.

  async insertTask(m: EntityManager, a: Omit<TaskApprovalRow, 'runtime'>): Promise<TaskApprovalRow> {
    const { rows } = await execSql<TaskApprovalRow>(
      m,
      `INSERT INTO approvals (runtime, id, tenant_id, task_id, run_id, step_id, kind, status, reason, action_summary, details, action_hash,
         requested_by, resolved_by, note, created_at, resolved_at)
       VALUES ('task_run', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING *`,
      [
        a.id,
        a.tenant_id,
        a.task_id,
        a.run_id,
        a.step_id,
        a.kind,
        a.status,
        a.reason,
        JSON.stringify(a.action_summary),
        JSON.stringify(a.details),
        a.action_hash,
        a.requested_by,
        a.resolved_by,
        a.note,
        a.created_at,
        a.resolved_at,
      ],
    );
    return rows[0];
  }

  async listForTask(tenantId: string, taskId: string): Promise<TaskApprovalRow[]> {
    const { rows } = await execSql<TaskApprovalRow>(this.manager, `SELECT * FROM approvals WHERE tenant_id = $1 AND task_id = $2 ORDER BY created_at`, [
      tenantId,
      taskId,
    ]);
    return rows;
  }

  async listForRun(tenantId: string, runId: string, m: EntityManager = this.manager): Promise<TaskApprovalRow[]> {
    const { rows } = await execSql<TaskApprovalRow>(m, `SELECT * FROM approvals WHERE tenant_id = $1 AND run_id = $2 ORDER BY created_at`, [tenantId, runId]);
    return rows;
  }

  async findForTask(tenantId: string, taskId: string, id: string, m: EntityManager = this.manager): Promise<TaskApprovalRow | null> {
    const { rows } = await execSql<TaskApprovalRow>(m, `SELECT * FROM approvals WHERE tenant_id = $1 AND task_id = $2 AND id = $3`, [tenantId, taskId, id]);
    return rows[0] ?? null;
  }

  async deleteForTask(m: EntityManager, tenantId: string, taskId: string): Promise<void> {
    await execSql(m, `DELETE FROM approvals WHERE tenant_id = $1 AND task_id = $2`, [tenantId, taskId]);
  }

  // An External Agent turn's permission requests.

  /** A request: pending (with its waiter and expiry), or already settled (a grant or the default mode decided it). */
  async insertTurn(a: NewTurnApproval, state: { waiter: string; timeoutMs: number } | Resolution): Promise<TurnApprovalRow> {
    const pending = 'waiter' in state;
    const { rows } = await execSql<TurnApprovalRow>(
      this.manager,
      `INSERT INTO approvals (runtime, id, tenant_id, session_id, turn_id, adapter_id, workspace, tool_call_id, tool_kind, tool_name, options, scope_choices,
         status, decision, scope, path, selected_option, grant_id, note, waiter, expires_at, resolved_at)
       VALUES ('agent_chat_turn', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
         CASE WHEN $20::bigint IS NULL THEN NULL ELSE now() + $20::bigint * interval '1 millisecond' END,
         CASE WHEN $12 = 'pending' THEN NULL ELSE now() END)
       RETURNING *`,
      [
        `appr_${randomHex(12)}`,
        a.tenant_id,
        a.session_id,
        a.turn_id,
        a.adapter_id,
        a.workspace,
        a.tool_call_id,
        a.tool_kind,
        a.tool_name,
        JSON.stringify(a.options),
        JSON.stringify(a.scope_choices),
        pending ? 'pending' : state.status,
        pending ? null : (state.decision ?? null),
        pending ? null : (state.scope ?? null),
        pending ? null : (state.path ?? null),
        pending ? null : (state.selected_option ?? null),
        pending ? null : (state.grant_id ?? null),
        pending ? '' : (state.note ?? ''),
        pending ? state.waiter : null,
        pending ? state.timeoutMs : null,
      ],
    );
    return rows[0];
  }

  async findInSession(tenantId: string, sessionId: string, id: string, m: EntityManager = this.manager, lock = false): Promise<TurnApprovalRow | null> {
    const { rows } = await execSql<TurnApprovalRow>(
      m,
      `SELECT * FROM approvals WHERE id = $1 AND session_id = $2 AND tenant_id = $3${lock ? ' FOR UPDATE' : ''}`,
      [id, sessionId, tenantId],
    );
    return rows[0] ?? null;
  }

  async listForSession(tenantId: string, sessionId: string, status?: ApprovalStatus): Promise<TurnApprovalRow[]> {
    const { rows } = await execSql<TurnApprovalRow>(
      this.manager,
      `SELECT * FROM approvals WHERE session_id = $1 AND tenant_id = $2 AND ($3::text IS NULL OR status = $3) ORDER BY created_at, id LIMIT 500`,
      [sessionId, tenantId, status ?? null],
    );
    return rows;
  }

  /**
   * Pending requests nobody waits for any more — the turn they block is not running under its waiter's live lease (the
   * worker was lost, or this process restarted) — become `timed_out` with `path: startup_reconcile`.
   */
  async reconcileOrphans(): Promise<TurnApprovalRow[]> {
    return (await this.settle(this.manager, { orphans: true }, { status: 'timed_out', path: 'startup_reconcile' })) as TurnApprovalRow[];
  }

  /**
   * Retention of an External Agent's resolved requests (pending ones are never touched; a task's approvals go with
   * their task): older than `olderThan`, or beyond the newest `keepNewest`.
   */
  async pruneTurnApprovals(olderThan: Date, keepNewest: number): Promise<number> {
    const byAge = await execSql(this.manager, `DELETE FROM approvals WHERE runtime = 'agent_chat_turn' AND status <> 'pending' AND resolved_at < $1`, [
      olderThan,
    ]);
    const byCount = await execSql(
      this.manager,
      `DELETE FROM approvals WHERE id IN (
         SELECT id FROM approvals WHERE runtime = 'agent_chat_turn' AND status <> 'pending' ORDER BY resolved_at DESC, id DESC OFFSET $1)`,
      [keepNewest],
    );
    return byAge.affected + byCount.affected;
  }
}
