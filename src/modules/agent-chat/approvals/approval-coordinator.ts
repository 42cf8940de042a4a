import { Inject, Injectable } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import { LEASE_OWNER } from '@core/lease';
import { ignoreFailure } from '@core/logging/ignore-failure';
import type { Acp } from '@modules/agent-adapters';
import type { SessionRow } from '../agent-chat-rows';
import { approvalChannel, channelDoorbell } from '../agent-chat-signals';
import { requestedFrame, resolvedFrame } from './approval-views';
import { SCOPE_CHOICES, toolKindOf, TurnApprovalsService, type PermissionOption, type TurnApprovalRow as ApprovalRow } from '@modules/approvals';

/** Without a doorbell (a lost bus message), the waiter still re-reads its row this often. */
const REREAD_MS = 2000;

export interface PermissionContext {
  session: SessionRow;
  turnId: string;
  /** Aborts when the request dies (the turn is cancelled, the adapter goes, the worker stops). */
  signal: AbortSignal;
  /** Appends a frame to the turn's live stream (the session stream's `approval.*` events). */
  emit(frame: Record<string, unknown>): void;
}

/**
 * The approval coordinator on the worker holding an External Agent session (docs/api.md §4): each ACP
 * `session/request_permission` becomes a request in the approvals store. A live grant decides it at once (`path: grant`);
 * else the mode does — `auto` allows, `deny` rejects (`default_mode`), `prompt` leaves it pending for an operator
 * until GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT (`timeout`, answered `cancelled`). The operator's decision is written
 * to Postgres by whichever api process takes it, put on the turn's stream, then rung on the bus; this waiter re-reads
 * the row on the ring (or every 2 s without one). A request whose turn dies is `cancelled` with `path:
 * request_cancelled`. Every `approval.*` frame is sent by whoever commits the row it reports, right after the commit.
 */
@Injectable()
export class ApprovalCoordinator {
  constructor(
    private readonly config: AppConfig,
    private readonly approvals: TurnApprovalsService,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  get mode(): 'prompt' | 'auto' | 'deny' {
    return this.config.agent.adapters.approvalMode;
  }

  async decide(ctx: PermissionContext, request: Acp.RequestPermissionRequest): Promise<{ response: Acp.RequestPermissionResponse; approval: ApprovalRow }> {
    const { session } = ctx;
    const options: PermissionOption[] = request.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind }));
    const toolKind = toolKindOf(request.toolCall);
    const base = {
      tenant_id: session.tenant_id,
      session_id: session.id,
      turn_id: ctx.turnId,
      adapter_id: session.adapter_id,
      workspace: session.workspace,
      tool_call_id: request.toolCall.toolCallId,
      tool_kind: toolKind,
      tool_name: (request.toolCall.title ?? request.toolCall.toolCallId).slice(0, 500),
      options,
      scope_choices: [...SCOPE_CHOICES],
    };
    // Decided at once by the most specific live grant or by the mode (`auto` / `deny`), else pending for an operator.
    const opened = await this.approvals.open(base, { mode: this.mode, waiter: LEASE_OWNER, timeoutMs: this.config.agent.adapters.approvalTimeoutMs });
    if (opened.status !== 'pending') return this.settled(ctx, opened);
    const pending = opened;
    ctx.emit(requestedFrame(pending));
    let decided: ApprovalRow;
    try {
      decided = await this.wait(pending, ctx.signal);
    } catch (err) {
      // The waiter failed (the database or the bus): nobody may decide a request nothing waits for any more.
      await this.approvals
        .settle(pending.id, { status: 'cancelled', path: 'request_cancelled' })
        .catch(
          ignoreFailure('cancelling an approval whose waiter failed', 'the recovery pass times out pending approvals nothing waits for (startup_reconcile)'),
        );
      throw err;
    }
    return this.settled(ctx, decided);
  }

  /** Until the row leaves `pending`: a decision (any api process), the timeout, or the request's death. */
  private async wait(pending: ApprovalRow, signal: AbortSignal): Promise<ApprovalRow> {
    const bell = await channelDoorbell(this.bus, approvalChannel(pending.id));
    const deadline = Date.now() + this.config.agent.adapters.approvalTimeoutMs;
    try {
      for (;;) {
        const row = await this.approvals.byId(pending.id);
        if (!row) throw new Error(`approval ${pending.id} vanished (its session was deleted)`);
        if (row.status !== 'pending') return row;
        if (signal.aborted) {
          const cancelled = await this.approvals.settle(pending.id, { status: 'cancelled', path: 'request_cancelled' });
          if (cancelled) return cancelled;
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          const timedOut = await this.approvals.settle(pending.id, { status: 'timed_out', path: 'timeout' });
          if (timedOut) return timedOut;
          continue;
        }
        await bell.next(Math.min(left, REREAD_MS), signal);
      }
    } finally {
      await bell.close();
    }
  }

  private settled(ctx: PermissionContext, approval: ApprovalRow): { response: Acp.RequestPermissionResponse; approval: ApprovalRow } {
    // An operator's decision was put on the turn's stream by the api process that committed it (AgentChatApprovalsService).
    if (approval.path !== 'operator') ctx.emit(resolvedFrame(approval));
    const decided = approval.status === 'approved' || approval.status === 'denied';
    const option = decided ? (approval.options.find((o) => o.optionId === approval.selected_option) ?? null) : null;
    return {
      response: option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } },
      approval,
    };
  }
}
