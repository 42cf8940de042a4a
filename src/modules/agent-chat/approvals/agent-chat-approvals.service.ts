import { Inject, Injectable } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { TurnApprovalsService, type TurnApprovalRow, type TurnApprovalStatus } from '@modules/approvals';
import { approvalChannel } from '../agent-chat-signals';
import { AgentChatRepository } from '../agent-chat.repository';
import { resolvedFrame, toApprovalView, toGrantView } from './approval-views';
import type { ListAgentChatGrantsDto, ResolveAgentChatApprovalDto } from '../agent-chat.dto';
import { AgentChatService } from '../agent-chat.service';

/**
 * External-agent approvals and grants for operators (docs/agent-chat-approvals.md), on the approvals module's store. A decision
 * is written to Postgres first — the pending row settled, and the grant its scope leaves, in one transaction — then its
 * `approval.resolved` frame goes onto the turn's live stream (before the agent can go on: every reader sees it before
 * what the agent does next), then it is rung on the bus to the worker that waits (which re-reads the row: a lost ring
 * costs at most its 2 s re-read).
 */
@Injectable()
export class AgentChatApprovalsService {
  constructor(
    private readonly chats: AgentChatService,
    private readonly approvals: TurnApprovalsService,
    private readonly repo: AgentChatRepository,
    @Inject(EventBus) private readonly bus: EventBus,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  async list(tenantId: string, sessionId: string, status?: TurnApprovalStatus) {
    await this.chats.require(tenantId, sessionId);
    return (await this.approvals.list(tenantId, sessionId, status)).map(toApprovalView);
  }

  /** Requests still waiting for an operator, across the tenant's sessions. */
  async listPending(tenantId: string, limit: number) {
    return (await this.approvals.listPending(tenantId, limit)).map(toApprovalView);
  }

  async get(tenantId: string, sessionId: string, id: string) {
    await this.chats.require(tenantId, sessionId);
    return toApprovalView(await this.approvals.get(tenantId, sessionId, id));
  }

  async resolve(tenantId: string, sessionId: string, id: string, dto: ResolveAgentChatApprovalDto) {
    await this.chats.require(tenantId, sessionId);
    const settled = await this.approvals.decide(tenantId, sessionId, id, {
      decision: dto.decision === 'approve' ? 'approve' : 'deny',
      scope: dto.scope ?? 'once',
      selected_option: dto.selected_option,
      note: dto.note,
      grant_expires_at: dto.grant_expires_at,
    });
    await this.decided(settled);
    return toApprovalView(settled);
  }

  /** The operator withdraws the request: the agent is answered `cancelled`. */
  async cancel(tenantId: string, sessionId: string, id: string) {
    await this.chats.require(tenantId, sessionId);
    const settled = await this.approvals.withdraw(tenantId, sessionId, id);
    await this.decided(settled);
    return toApprovalView(settled);
  }

  async grants(tenantId: string, filter: ListAgentChatGrantsDto) {
    return (await this.approvals.listGrants(tenantId, filter)).map(toGrantView);
  }

  async revokeGrant(tenantId: string, id: string) {
    return { ...toGrantView(await this.approvals.revokeGrant(tenantId, id)), deleted: true };
  }

  /** After the commit: the frame on the turn's stream, then the ring (the coordinator sends no frame for `path: operator`). */
  private async decided(a: TurnApprovalRow): Promise<void> {
    const turn = a.turn_id ? await this.repo.findTurn(a.turn_id) : null;
    if (turn) {
      await this.live
        .append(turn.stream_id, JSON.stringify(resolvedFrame(a)))
        .catch((err: unknown) => rootLogger().warn({ approval_id: a.id, err: String(err) }, 'approval.resolved not appended to the turn stream'));
    }
    await this.bus
      .publish(approvalChannel(a.id), { approval_id: a.id })
      .catch(ignoreFailure('approval decision doorbell', 'the waiter re-reads the approval from Postgres within a second'));
  }
}
