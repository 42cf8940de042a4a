import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { randomHex } from '@core/context/random-hex';
import { execSql } from '@core/database/sql';
import { MetricsService } from '@core/metrics/metrics.service';
import type { ApprovalPath, ApprovalScope, ApprovalStatus, Decision, PermissionOption, ToolKind } from './approval-vocabulary';

export interface ApprovalRow {
  id: string;
  tenant_id: string;
  session_id: string;
  turn_id: string | null;
  adapter_id: string;
  workspace: string;
  tool_call_id: string;
  tool_kind: ToolKind;
  tool_name: string;
  options: PermissionOption[];
  scope_choices: ApprovalScope[];
  status: ApprovalStatus;
  decision: Decision | null;
  scope: ApprovalScope | null;
  path: ApprovalPath | null;
  selected_option: string | null;
  grant_id: string | null;
  note: string;
  waiter: string | null;
  created_at: Date;
  expires_at: Date | null;
  resolved_at: Date | null;
}

export interface GrantRow {
  id: string;
  tenant_id: string;
  scope: ApprovalScope;
  decision: 'allow' | 'deny';
  adapter_id: string;
  tool_kind: ToolKind;
  workspace: string | null;
  session_id: string | null;
  approval_id: string | null;
  note: string;
  created_at: Date;
  expires_at: Date | null;
}

export type NewApproval = Pick<
  ApprovalRow,
  'tenant_id' | 'session_id' | 'turn_id' | 'adapter_id' | 'workspace' | 'tool_call_id' | 'tool_kind' | 'tool_name' | 'options' | 'scope_choices'
>;

/** How a request was settled without an operator, or by one (the columns a resolution sets). */
export interface Resolution {
  status: Exclude<ApprovalStatus, 'pending'>;
  path: ApprovalPath;
  decision?: Decision | null;
  scope?: ApprovalScope | null;
  selected_option?: string | null;
  grant_id?: string | null;
  note?: string;
}

const UNEXPIRED = `(expires_at IS NULL OR expires_at > now())`;

/**
 * Approval rows and grants (seed 003 external-agent approvals; migration 1795700000000). A pending row is resolved
 * once: every resolution is a conditional UPDATE on `status = 'pending'`, so an operator's decision, the timeout, a
 * cancelled request and the reconcile pass cannot both win.
 */
@Injectable()
export class ApprovalsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
  ) {}

  /** A pending request settled (every path that settles one ends here): its wait, by outcome. */
  private settled(rows: ApprovalRow[]): ApprovalRow[] {
    for (const a of rows) if (a.status !== 'pending') this.metrics.approvalResolved('agent_chat', a.status, a.created_at, a.resolved_at);
    return rows;
  }

  async countPending(): Promise<number> {
    const { rows } = await execSql<{ n: string }>(this.manager, `SELECT count(*) AS n FROM agent_chat_approvals WHERE status = 'pending'`);
    return Number(rows[0]?.n ?? 0);
  }

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** A request: pending (with its waiter and expiry), or already settled (a grant or the default mode decided it). */
  async insert(a: NewApproval, state: { waiter: string; timeoutMs: number } | Resolution): Promise<ApprovalRow> {
    const id = `appr_${randomHex(12)}`;
    const pending = 'waiter' in state;
    const { rows } = await execSql<ApprovalRow>(
      this.manager,
      `INSERT INTO agent_chat_approvals (id, tenant_id, session_id, turn_id, adapter_id, workspace, tool_call_id, tool_kind, tool_name, options, scope_choices,
         status, decision, scope, path, selected_option, grant_id, note, waiter, expires_at, resolved_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
         CASE WHEN $20::bigint IS NULL THEN NULL ELSE now() + $20::bigint * interval '1 millisecond' END,
         CASE WHEN $12 = 'pending' THEN NULL ELSE now() END)
       RETURNING *`,
      [
        id,
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
        pending ? null : state.path,
        pending ? null : (state.selected_option ?? null),
        pending ? null : (state.grant_id ?? null),
        pending ? '' : (state.note ?? ''),
        pending ? state.waiter : null,
        pending ? state.timeoutMs : null,
      ],
    );
    return rows[0];
  }

  async find(tenantId: string, sessionId: string, id: string, m: EntityManager = this.manager, lock = false): Promise<ApprovalRow | null> {
    const { rows } = await execSql<ApprovalRow>(
      m,
      `SELECT * FROM agent_chat_approvals WHERE id = $1 AND session_id = $2 AND tenant_id = $3${lock ? ' FOR UPDATE' : ''}`,
      [id, sessionId, tenantId],
    );
    return rows[0] ?? null;
  }

  async byId(id: string): Promise<ApprovalRow | null> {
    const { rows } = await execSql<ApprovalRow>(this.manager, `SELECT * FROM agent_chat_approvals WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** The tenant's pending requests across its sessions, oldest first (the partial index `agent_chat_approvals_pending`). */
  async listPending(tenantId: string, limit: number): Promise<ApprovalRow[]> {
    const { rows } = await execSql<ApprovalRow>(
      this.manager,
      `SELECT * FROM agent_chat_approvals WHERE status = 'pending' AND tenant_id = $1 ORDER BY created_at, id LIMIT $2`,
      [tenantId, limit],
    );
    return rows;
  }

  async list(tenantId: string, sessionId: string, status?: ApprovalStatus): Promise<ApprovalRow[]> {
    const { rows } = await execSql<ApprovalRow>(
      this.manager,
      `SELECT * FROM agent_chat_approvals WHERE session_id = $1 AND tenant_id = $2 AND ($3::text IS NULL OR status = $3) ORDER BY created_at, id LIMIT 500`,
      [sessionId, tenantId, status ?? null],
    );
    return rows;
  }

  /** Settles a pending request; null when it was no longer pending (someone else settled it first). */
  async resolve(id: string, r: Resolution, m: EntityManager = this.manager): Promise<ApprovalRow | null> {
    const { rows } = await execSql<ApprovalRow>(
      m,
      `UPDATE agent_chat_approvals SET status = $2, path = $3, decision = $4, scope = $5, selected_option = $6, grant_id = $7, note = $8, resolved_at = now()
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [id, r.status, r.path, r.decision ?? null, r.scope ?? null, r.selected_option ?? null, r.grant_id ?? null, r.note ?? ''],
    );
    return this.settled(rows)[0] ?? null;
  }

  /**
   * The grant that decides a request, most specific first (this session; this adapter in this workspace; this
   * adapter anywhere), the latest of a scope winning; expired grants never match.
   */
  async matchGrant(tenantId: string, adapterId: string, toolKind: ToolKind, sessionId: string, workspace: string): Promise<GrantRow | null> {
    const { rows } = await execSql<GrantRow>(
      this.manager,
      `SELECT * FROM agent_chat_grants
        WHERE tenant_id = $1 AND adapter_id = $2 AND tool_kind = $3 AND ${UNEXPIRED}
          AND ((scope = 'session' AND session_id = $4) OR (scope = 'workspace_tool' AND workspace = $5) OR scope = 'adapter_tool')
        ORDER BY CASE scope WHEN 'session' THEN 0 WHEN 'workspace_tool' THEN 1 ELSE 2 END, created_at DESC, id DESC
        LIMIT 1`,
      [tenantId, adapterId, toolKind, sessionId, workspace],
    );
    return rows[0] ?? null;
  }

  async insertGrant(m: EntityManager, g: Omit<GrantRow, 'id' | 'created_at'>): Promise<GrantRow> {
    const { rows } = await execSql<GrantRow>(
      m,
      `INSERT INTO agent_chat_grants (id, tenant_id, scope, decision, adapter_id, tool_kind, workspace, session_id, approval_id, note, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [`grant_${randomHex(12)}`, g.tenant_id, g.scope, g.decision, g.adapter_id, g.tool_kind, g.workspace, g.session_id, g.approval_id, g.note, g.expires_at],
    );
    return rows[0];
  }

  async listGrants(tenantId: string, f: { adapter_id?: string; scope?: string; tool_kind?: string }): Promise<GrantRow[]> {
    const { rows } = await execSql<GrantRow>(
      this.manager,
      `SELECT * FROM agent_chat_grants
        WHERE tenant_id = $1 AND ${UNEXPIRED} AND ($2::text IS NULL OR adapter_id = $2) AND ($3::text IS NULL OR scope = $3) AND ($4::text IS NULL OR tool_kind = $4)
        ORDER BY created_at DESC, id DESC LIMIT 500`,
      [tenantId, f.adapter_id ?? null, f.scope ?? null, f.tool_kind ?? null],
    );
    return rows;
  }

  async deleteGrant(tenantId: string, id: string): Promise<GrantRow | null> {
    const { rows } = await execSql<GrantRow>(this.manager, `DELETE FROM agent_chat_grants WHERE id = $1 AND tenant_id = $2 RETURNING *`, [id, tenantId]);
    return rows[0] ?? null;
  }

  /**
   * Pending requests nobody waits for any more — the turn they block is not running under its waiter's live lease (the
   * worker was lost, or this process restarted) — become `timed_out` with `path: startup_reconcile`.
   */
  async reconcileOrphans(): Promise<ApprovalRow[]> {
    const { rows } = await execSql<ApprovalRow>(
      this.manager,
      `UPDATE agent_chat_approvals a SET status = 'timed_out', path = 'startup_reconcile', resolved_at = now()
        WHERE a.status = 'pending' AND a.created_at < now() - interval '1 second'
          AND NOT EXISTS (SELECT 1 FROM agent_chat_turns t
                           WHERE t.id = a.turn_id AND t.status = 'running' AND t.lease_owner = a.waiter AND t.lease_expires_at > now())
        RETURNING *`,
    );
    return this.settled(rows);
  }

  /**
   * Retention of resolved requests (pending ones are never touched): older than `olderThan`, or beyond the newest
   * `keepNewest`. Expired grants go too (only their own expiry removes a grant).
   */
  async prune(olderThan: Date, keepNewest: number): Promise<{ approvals: number; grants: number }> {
    const byAge = await execSql(this.manager, `DELETE FROM agent_chat_approvals WHERE status <> 'pending' AND resolved_at < $1`, [olderThan]);
    const byCount = await execSql(
      this.manager,
      `DELETE FROM agent_chat_approvals WHERE id IN (
         SELECT id FROM agent_chat_approvals WHERE status <> 'pending' ORDER BY resolved_at DESC, id DESC OFFSET $1)`,
      [keepNewest],
    );
    const grants = await execSql(this.manager, `DELETE FROM agent_chat_grants WHERE expires_at IS NOT NULL AND expires_at <= now()`);
    return { approvals: byAge.affected + byCount.affected, grants: grants.affected };
  }
}
