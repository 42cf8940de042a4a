import { Inject, Injectable } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { approvalChannel } from './agent-chat-signals';
import { AgentChatRepository } from './agent-chat.repository';
import { resolvedFrame, toApprovalView, toGrantView } from './approval-views';
import { optionFor, statusOf, type ApprovalStatus, type Decision } from './approval-vocabulary';
import { ApprovalsRepository, type ApprovalRow } from './approvals.repository';
import type { ListAgentChatGrantsDto, ResolveAgentChatApprovalDto } from './agent-chat.dto';
import { AgentChatApprovalNotFoundError, AgentChatApprovalNotPendingError, AgentChatGrantNotFoundError, approvalChoiceInvalid } from './agent-chat.errors';
import { AgentChatService } from './agent-chat.service';

/**
 * External-agent approvals and grants for operators (seed 003; issue 16). A decision is written to Postgres first —
 * the pending row settled, and the grant its scope leaves, in one transaction — then its `approval.resolved` frame goes
 * onto the turn's live stream (before the agent can go on: every reader sees it before what the agent does next), then
 * it is rung on the bus to the worker that waits (which re-reads the row: a lost ring costs at most its 2 s re-read).
 */
@Injectable()
export class AgentChatApprovalsService {
  constructor(
    private readonly chats: AgentChatService,
    private readonly approvals: ApprovalsRepository,
    private readonly repo: AgentChatRepository,
    @Inject(EventBus) private readonly bus: EventBus,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  async list(tenantId: string, sessionId: string, status?: ApprovalStatus) {
    await this.chats.require(tenantId, sessionId);
    return (await this.approvals.list(tenantId, sessionId, status)).map(toApprovalView);
  }

  /** Requests still waiting for an operator, across the tenant's sessions. */
  async listPending(tenantId: string, limit: number) {
    return (await this.approvals.listPending(tenantId, limit)).map(toApprovalView);
  }

  async get(tenantId: string, sessionId: string, id: string) {
    await this.chats.require(tenantId, sessionId);
    const row = await this.approvals.find(tenantId, sessionId, id);
    if (!row) throw new AgentChatApprovalNotFoundError(sessionId, id);
    return toApprovalView(row);
  }

  async resolve(tenantId: string, sessionId: string, id: string, dto: ResolveAgentChatApprovalDto) {
    await this.chats.require(tenantId, sessionId);
    const decision: Decision = dto.decision === 'approve' ? 'approve' : 'deny';
    const scope = dto.scope ?? 'once';
    const settled = await this.approvals.transaction(async (m) => {
      const row = await this.approvals.find(tenantId, sessionId, id, m, true);
      if (!row) throw new AgentChatApprovalNotFoundError(sessionId, id);
      if (row.status !== 'pending') throw new AgentChatApprovalNotPendingError(id, row.status, row.path);
      if (!row.scope_choices.includes(scope))
        throw approvalChoiceInvalid(`scope ${scope} is not offered`, { field: 'scope', scope_choices: row.scope_choices });
      const option = optionFor(row.options, decision, dto.selected_option);
      if (dto.selected_option && !option)
        throw approvalChoiceInvalid(`option ${JSON.stringify(dto.selected_option)} is not one the agent offered to ${decision}`, {
          field: 'selected_option',
          options: row.options.map((o) => ({ option_id: o.optionId, kind: o.kind })),
        });
      const grant =
        scope === 'once'
          ? null
          : await this.approvals.insertGrant(m, {
              tenant_id: tenantId,
              scope,
              decision: decision === 'approve' ? 'allow' : 'deny',
              adapter_id: row.adapter_id,
              tool_kind: row.tool_kind,
              workspace: scope === 'workspace_tool' ? row.workspace : null,
              session_id: scope === 'session' ? row.session_id : null,
              approval_id: row.id,
              note: dto.note ?? '',
              expires_at: dto.grant_expires_at ? new Date(dto.grant_expires_at) : null,
            });
      return this.approvals.resolve(
        id,
        {
          status: statusOf(decision),
          path: 'operator',
          decision,
          scope,
          selected_option: option?.optionId ?? null,
          grant_id: grant?.id ?? null,
          note: dto.note,
        },
        m,
      );
    });
    await this.decided(settled!);
    return toApprovalView(settled!);
  }

  /** The operator withdraws the request: the agent is answered `cancelled`. */
  async cancel(tenantId: string, sessionId: string, id: string) {
    await this.chats.require(tenantId, sessionId);
    const settled = await this.approvals.transaction(async (m) => {
      const row = await this.approvals.find(tenantId, sessionId, id, m, true);
      if (!row) throw new AgentChatApprovalNotFoundError(sessionId, id);
      if (row.status !== 'pending') throw new AgentChatApprovalNotPendingError(id, row.status, row.path);
      return this.approvals.resolve(id, { status: 'cancelled', path: 'operator' }, m);
    });
    await this.decided(settled!);
    return toApprovalView(settled!);
  }

  async grants(tenantId: string, filter: ListAgentChatGrantsDto) {
    return (await this.approvals.listGrants(tenantId, filter)).map(toGrantView);
  }

  async revokeGrant(tenantId: string, id: string) {
    const row = await this.approvals.deleteGrant(tenantId, id);
    if (!row) throw new AgentChatGrantNotFoundError(id);
    return { ...toGrantView(row), deleted: true };
  }

  /** After the commit: the frame on the turn's stream, then the ring (the coordinator sends no frame for `path: operator`). */
  private async decided(a: ApprovalRow): Promise<void> {
    const turn = a.turn_id ? await this.repo.findTurn(a.turn_id) : null;
    if (turn) {
      await this.live
        .append(turn.stream_id, JSON.stringify(resolvedFrame(a)))
        .catch((err: unknown) => rootLogger().warn({ approval_id: a.id, err: String(err) }, 'approval.resolved not appended to the turn stream'));
    }
    await this.bus.publish(approvalChannel(a.id), { approval_id: a.id }).catch(() => undefined);
  }
}
