import { Injectable } from '@nestjs/common';
import { PendingApprovalsGauge } from '@core/health/system-info.decorator';
import type { GrantRow, Resolution, TurnApprovalRow } from './approval-rows';
import { optionFor, statusOf, type ApprovalScope, type ApprovalStatus, type Decision } from './approval-vocabulary';
import { AgentChatApprovalNotFoundError, AgentChatApprovalNotPendingError, AgentChatGrantNotFoundError, approvalChoiceInvalid } from './approvals.errors';
import { ApprovalsRepository, type NewTurnApproval } from './approvals.repository';
import { GrantsRepository } from './grants.repository';

/** How requests nobody has decided yet are settled: `prompt` waits for an operator, `auto` allows, `deny` rejects. */
export type ApprovalMode = 'prompt' | 'auto' | 'deny';

/** An operator's answer to a request. */
export interface OperatorChoice {
  decision: Decision;
  scope: ApprovalScope;
  selected_option?: string;
  note?: string;
  grant_expires_at?: string;
}

/**
 * An External Agent turn's approvals (`runtime = agent_chat_turn`) and the grants operators leave: a request is
 * decided at once by the most specific live grant (`path: grant`) or the mode (`default_mode`), else it waits for an
 * operator, a timeout or its request's death. Every decision is the store's one settlement (ApprovalsRepository.settle);
 * an operator's decision and the grant its scope leaves commit in one transaction. Waking the waiter (the turn's frame,
 * the bus ring) is the caller's, after the commit.
 */
@Injectable()
export class TurnApprovalsService {
  constructor(
    private readonly approvals: ApprovalsRepository,
    private readonly grants: GrantsRepository,
  ) {}

  /** A new request: settled by a live grant or the mode, or pending for `waiter` until `timeoutMs`. */
  async open(a: NewTurnApproval, how: { mode: ApprovalMode; waiter: string; timeoutMs: number }): Promise<TurnApprovalRow> {
    const grant = await this.grants.match(a.tenant_id, a.adapter_id, a.tool_kind, a.session_id, a.workspace);
    const preset: { decision: Decision; path: 'grant' | 'default_mode' } | null = grant
      ? { decision: grant.decision === 'allow' ? 'approve' : 'deny', path: 'grant' }
      : how.mode === 'prompt'
        ? null
        : { decision: how.mode === 'auto' ? 'approve' : 'deny', path: 'default_mode' };
    if (!preset) return this.approvals.insertTurn(a, { waiter: how.waiter, timeoutMs: how.timeoutMs });
    return this.approvals.insertTurn(a, {
      status: statusOf(preset.decision),
      path: preset.path,
      decision: preset.decision,
      scope: grant?.scope ?? 'once',
      selected_option: optionFor(a.options, preset.decision)?.optionId ?? null,
      grant_id: grant?.id ?? null,
    });
  }

  /** Settles a pending request without an operator (timeout, its request's death); null when it was settled already. */
  settle(id: string, r: Resolution): Promise<TurnApprovalRow | null> {
    return this.approvals.resolve(id, r);
  }

  async byId(id: string): Promise<TurnApprovalRow | null> {
    return (await this.approvals.byId(id)) as TurnApprovalRow | null;
  }

  list(tenantId: string, sessionId: string, status?: ApprovalStatus): Promise<TurnApprovalRow[]> {
    return this.approvals.listForSession(tenantId, sessionId, status);
  }

  /** Requests still waiting for an operator, across the tenant's sessions, oldest first. */
  listPending(tenantId: string, limit: number): Promise<TurnApprovalRow[]> {
    return this.approvals.listPending('agent_chat_turn', tenantId, limit);
  }

  async get(tenantId: string, sessionId: string, id: string): Promise<TurnApprovalRow> {
    const row = await this.approvals.findInSession(tenantId, sessionId, id);
    if (!row) throw new AgentChatApprovalNotFoundError(sessionId, id);
    return row;
  }

  /** An operator's decision: the pending row settled and the grant its scope leaves, in one transaction. */
  async decide(tenantId: string, sessionId: string, id: string, choice: OperatorChoice): Promise<TurnApprovalRow> {
    const { decision, scope } = choice;
    return this.approvals.transaction(async (m) => {
      const row = await this.pending(tenantId, sessionId, id, m);
      if (!row.scope_choices.includes(scope))
        throw approvalChoiceInvalid(`scope ${scope} is not offered`, { field: 'scope', scope_choices: row.scope_choices });
      const option = optionFor(row.options, decision, choice.selected_option);
      if (choice.selected_option && !option)
        throw approvalChoiceInvalid(`option ${JSON.stringify(choice.selected_option)} is not one the agent offered to ${decision}`, {
          field: 'selected_option',
          options: row.options.map((o) => ({ option_id: o.optionId, kind: o.kind })),
        });
      const grant =
        scope === 'once'
          ? null
          : await this.grants.insert(m, {
              tenant_id: tenantId,
              scope,
              decision: decision === 'approve' ? 'allow' : 'deny',
              adapter_id: row.adapter_id,
              tool_kind: row.tool_kind,
              workspace: scope === 'workspace_tool' ? row.workspace : null,
              session_id: scope === 'session' ? row.session_id : null,
              approval_id: row.id,
              note: choice.note ?? '',
              expires_at: choice.grant_expires_at ? new Date(choice.grant_expires_at) : null,
            });
      const resolution = {
        path: 'operator',
        decision,
        scope,
        selected_option: option?.optionId ?? null,
        grant_id: grant?.id ?? null,
        note: choice.note,
      } as const;
      return (await this.approvals.resolve(id, { status: statusOf(decision), ...resolution }, m))!;
    });
  }

  /** The operator withdraws the request (the agent is answered `cancelled`). */
  async withdraw(tenantId: string, sessionId: string, id: string): Promise<TurnApprovalRow> {
    return this.approvals.transaction(async (m) => {
      await this.pending(tenantId, sessionId, id, m);
      return (await this.approvals.resolve(id, { status: 'cancelled', path: 'operator' }, m))!;
    });
  }

  /** The row, locked for the decision; 404 when the session has no such request, 409 when it was settled already. */
  private async pending(tenantId: string, sessionId: string, id: string, m: Parameters<ApprovalsRepository['findInSession']>[3]): Promise<TurnApprovalRow> {
    const row = await this.approvals.findInSession(tenantId, sessionId, id, m, true);
    if (!row) throw new AgentChatApprovalNotFoundError(sessionId, id);
    if (row.status !== 'pending') throw new AgentChatApprovalNotPendingError(id, row.status, row.path);
    return row;
  }

  listGrants(tenantId: string, filter: { adapter_id?: string; scope?: string; tool_kind?: string }): Promise<GrantRow[]> {
    return this.grants.list(tenantId, filter);
  }

  async revokeGrant(tenantId: string, id: string): Promise<GrantRow> {
    const row = await this.grants.delete(tenantId, id);
    if (!row) throw new AgentChatGrantNotFoundError(id);
    return row;
  }

  /** Pending requests whose waiter is gone become `timed_out` (`path: startup_reconcile`). */
  reconcileOrphans(): Promise<TurnApprovalRow[]> {
    return this.approvals.reconcileOrphans();
  }

  /** Retention: resolved requests older than `olderThan` or beyond the newest `keepNewest`, and expired grants. */
  async prune(olderThan: Date, keepNewest: number): Promise<{ approvals: number; grants: number }> {
    const approvals = await this.approvals.pruneTurnApprovals(olderThan, keepNewest);
    return { approvals, grants: await this.grants.pruneExpired() };
  }

  @PendingApprovalsGauge('agent_chat')
  countPending(): Promise<number> {
    return this.approvals.countPending('agent_chat_turn');
  }
}
