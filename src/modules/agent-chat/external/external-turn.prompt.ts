import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { type Acp, AcpProtocolError } from '@modules/agent-adapters';
import type { MessageRow, SessionRow, TurnRow } from '../agent-chat-rows';
import { ApprovalCoordinator, type PermissionContext } from '../approvals/approval-coordinator';
import { AdapterSessionHost, type LiveAdapter } from '@modules/external-agents';
import { TurnLeaseRepository } from '../turns/turn-lease.repository';
import { type Activity, type ExternalOutcome, ExternalTurnSettler, type Note, type PromptUsage } from './external-turn.settler';

const PARTIAL_EVERY_MS = 1000;
/** After `session/cancel`, how long the agent gets to answer the prompt with `cancelled`. */
const CANCEL_GRACE_MS = 5_000;
const RAW_OUTPUT_MAX = 256 * 1024;

export interface TurnState {
  controller: AbortController;
  cancelled: boolean;
}

/** One prompt of an external-agent turn: who asks, on which adapter, and where its activities go. */
export interface PromptCall {
  session: SessionRow;
  turn: TurnRow;
  token: string;
  assistant: MessageRow;
  adapter: LiveAdapter;
  text: string;
  state: TurnState;
  activities: Activity[];
  note: Note;
}

/** What the prompt left: the reply, the raw updates (bounded), how it ended, and the usage the agent reported. */
export interface PromptResult {
  content: string;
  raw: unknown[];
  outcome: ExternalOutcome;
  usage?: PromptUsage;
}

/**
 * The prompt phase of an external-agent turn: `session/prompt` to the native session; its `session/update`
 * notifications become the turn's live stream (text deltas, tool calls as frames) and its partial in Postgres; a
 * permission request goes to the approval coordinator. A cancel sends `session/cancel`; an agent that does not stop
 * within the grace is ended, like one whose stdout broke ACP.
 */
@Injectable()
export class ExternalPromptPhase {
  constructor(
    private readonly config: AppConfig,
    private readonly leases: TurnLeaseRepository,
    private readonly host: AdapterSessionHost,
    private readonly approvals: ApprovalCoordinator,
    private readonly settler: ExternalTurnSettler,
  ) {}

  async prompt(call: PromptCall): Promise<PromptResult> {
    const { session, adapter, state } = call;
    const stream = this.streaming(call);
    adapter.turn = {
      onUpdate: stream.onUpdate,
      // Cancelling a turn answers its pending permission requests `cancelled` (ACP: the client must, after session/cancel).
      onPermission: (request, signal) =>
        this.permission(
          { session, turnId: call.turn.id, signal: AbortSignal.any([signal, state.controller.signal, adapter.proc.signal]), emit: stream.append },
          request,
          call.note,
        ),
    };
    const onAbort = () => void adapter.proc.notify('session/cancel', { sessionId: adapter.nativeId });
    state.controller.signal.addEventListener('abort', onAbort, { once: true });
    let outcome: ExternalOutcome;
    let usage: PromptUsage | undefined;
    try {
      ({ outcome, usage } = await this.ask(call));
    } catch (err) {
      const type = err instanceof AcpProtocolError ? `adapter_${err.kind}` : 'adapter_error';
      outcome = state.cancelled ? { status: 'cancelled' } : { status: 'failed', error: { type, message: errorText(err) } };
      // A broken adapter is not reused: the next turn starts (and restores) it again.
      if (err instanceof AcpProtocolError) await this.host.end(session.id, 'failed');
    } finally {
      state.controller.signal.removeEventListener('abort', onAbort);
      adapter.turn = null;
      this.host.touch(adapter);
    }
    await stream.saved();
    return { content: stream.content(), raw: stream.raw, outcome, usage };
  }

  /** `session/prompt`, raced against the cancel grace: an agent that does not stop when asked is ended. */
  private async ask({ session, adapter, state, text }: PromptCall): Promise<{ outcome: ExternalOutcome; usage?: PromptUsage }> {
    const promptCall = adapter.proc.request<Acp.PromptResponse>(
      'session/prompt',
      { sessionId: adapter.nativeId, prompt: [{ type: 'text', text }] },
      this.config.agent.adapters.turnTimeoutMs,
    );
    const cancelGrace = new Promise<'grace'>((resolve) =>
      state.controller.signal.addEventListener('abort', () => setTimeout(() => resolve('grace'), CANCEL_GRACE_MS).unref(), { once: true }),
    );
    const r = await Promise.race([promptCall, cancelGrace]);
    if (r === 'grace') {
      // It did not stop when asked: the process goes (the next turn starts it again).
      await this.host.end(session.id, 'failed');
      return { outcome: { status: 'cancelled' } };
    }
    const usage = (r as { usage?: PromptUsage }).usage || undefined;
    if (r.stopReason === 'refusal')
      return { outcome: { status: 'failed', error: { type: 'adapter_refusal', message: 'the agent refused the prompt' } }, usage };
    return { outcome: r.stopReason === 'cancelled' || state.cancelled ? { status: 'cancelled' } : { status: 'completed' }, usage };
  }

  /** The `session/update` handler: text deltas and tool calls to the live stream, the partial reply to Postgres. */
  private streaming({ turn, token, assistant, adapter, activities }: PromptCall) {
    let content = '';
    const raw: unknown[] = [];
    let rawBytes = 0;
    let savedAt = Date.now();
    let saving: Promise<unknown> = Promise.resolve();
    const append = (frame: Record<string, unknown>) => this.settler.append(turn.stream_id, frame);
    const tools = new Map<string, Activity>();
    const onUpdate = (update: Acp.SessionUpdate, n: { sessionId: string }) => {
      if (n.sessionId !== adapter.nativeId) return;
      const json = JSON.stringify(update);
      if (rawBytes < RAW_OUTPUT_MAX) {
        raw.push(update);
        rawBytes += json.length;
      }
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
        content += update.content.text;
        append({ content: update.content.text });
        if (Date.now() - savedAt >= PARTIAL_EVERY_MS) {
          savedAt = Date.now();
          const snapshot = content;
          saving = saving
            .then(() => this.leases.savePartial(turn.id, token, assistant.id, snapshot))
            .catch(ignoreFailure('partial reply save', 'the next save (or the turn end) writes the longer reply'));
        }
      } else if (update.sessionUpdate === 'tool_call') {
        const a: Activity = {
          type: 'tool_call',
          status: update.status ?? 'pending',
          title: update.title,
          detail: update.kind ?? 'other',
          tool_call_id: update.toolCallId,
          created_at: new Date().toISOString(),
        };
        tools.set(update.toolCallId, a);
        activities.push(a);
        append({ type: 'tool_call', tool_call_id: update.toolCallId, title: update.title, kind: update.kind ?? 'other', status: a.status });
      } else if (update.sessionUpdate === 'tool_call_update') {
        const a = tools.get(update.toolCallId);
        if (a && update.status) a.status = update.status;
        append({ type: 'tool_call_update', tool_call_id: update.toolCallId, status: update.status ?? undefined });
      }
    };
    return { onUpdate, append, raw, content: () => content, saved: () => saving };
  }

  /** A permission request goes to the approval coordinator; its disposition is an `approval` activity of the turn. */
  private async permission(ctx: PermissionContext, request: Acp.RequestPermissionRequest, note: Note): Promise<Acp.RequestPermissionResponse> {
    const { response, approval } = await this.approvals.decide(ctx, request);
    note({
      type: 'approval',
      status: approval.status,
      title: approval.tool_name,
      detail: approval.path ?? undefined,
      approval_id: approval.id,
      tool_call_id: approval.tool_call_id,
    });
    return response;
  }
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
