import { Inject, Injectable } from '@nestjs/common';
import { busChannels, EventBus } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { type Acp, AcpProtocolError, AdapterCatalog } from '@modules/agent-adapters';
import { COMMAND_SANDBOX, type CommandSandbox, WorkspaceGit } from '@modules/workspaces';
import type { MessageRow, TurnRow } from './agent-chat-rows';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { AgentChatRepository } from './agent-chat.repository';
import { ApprovalCoordinator, type PermissionContext } from './approval-coordinator';
import { AdapterSessionHost, type LiveAdapter, type Restored } from './adapter-session-host';
import { AdapterSessionRepository } from './adapter-session.repository';
import { TurnLeaseRepository } from './turn-lease.repository';

const PARTIAL_EVERY_MS = 1000;
/** After `session/cancel`, how long the agent gets to answer the prompt with `cancelled`. */
const CANCEL_GRACE_MS = 5_000;
const RAW_OUTPUT_MAX = 256 * 1024;

export interface TurnState {
  controller: AbortController;
  cancelled: boolean;
}

type Activity = { type: string; status: string; title: string; detail?: string; created_at: string; tool_call_id?: string; approval_id?: string };

/**
 * One External Agent turn on the worker holding the session's adapter (docs/api.md §4, docs/design.md §11.2–11.4): `session/prompt`
 * to the native session; `session/update` notifications become the turn's live stream (text deltas at the next index,
 * tool calls as frames) and its transcript — `content`, `raw_output`, `activities`, the workspace diff; a permission
 * request goes to the approval coordinator. Adapter failures (a crash, stdout that is not ACP, an oversized update, no
 * answer within the turn ceiling) end the turn `failed` with the error while the transcript stays intact.
 */
@Injectable()
export class ExternalTurnExecutor {
  constructor(
    private readonly config: AppConfig,
    private readonly repo: AgentChatRepository,
    private readonly leases: TurnLeaseRepository,
    private readonly adapterRows: AdapterSessionRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly host: AdapterSessionHost,
    private readonly catalog: AdapterCatalog,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    private readonly approvals: ApprovalCoordinator,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  /** Runs the claimed turn; false when it belongs to another worker (handed back and forwarded there). */
  async run(turn: TurnRow, token: string, state: TurnState, halted: () => boolean): Promise<boolean> {
    const inputs = await this.repo.turnInputs(turn.tenant_id, turn.session_id);
    const session = inputs?.session;
    const assistant = inputs?.messages.find((m) => m.id === turn.assistant_message_id);
    if (!session || !assistant) return true;
    const streamId = turn.stream_id;
    if (turn.attempts > 1) {
      // Its adapter process went with the worker that ran it: the turn cannot go on; the next one restores the session.
      await this.turns.end(
        turn,
        {
          status: 'failed',
          content: assistant.content,
          error: { type: 'adapter_interrupted', message: 'the worker running this turn was lost; its adapter process ended with it' },
        },
        token,
      );
      await this.markDone(streamId);
      return true;
    }
    const started = new Date();
    const activities: Activity[] = [];
    const def = this.catalog.find(session.adapter_id);
    const note = (a: Omit<Activity, 'created_at'>) => activities.push({ ...a, created_at: new Date().toISOString() });
    note({ type: 'started', status: 'completed', title: 'Starting external agent', detail: `${def?.name ?? session.adapter_id} in ${session.workspace}` });
    if (state.cancelled) {
      await this.finish(turn, token, streamId, { status: 'cancelled', content: '', activities, started, session_adapter: session.adapter_id });
      return true;
    }
    let acquired: { live: LiveAdapter; restored: Restored } | { owner: string };
    try {
      acquired = await this.host.acquire(session);
    } catch (err) {
      note({ type: 'failed', status: 'failed', title: 'The external agent did not start', detail: errorText(err) });
      await this.finish(turn, token, streamId, {
        status: 'failed',
        content: '',
        error: { type: 'adapter_start_failed', message: errorText(err) },
        activities,
        started,
        session_adapter: session.adapter_id,
      });
      return true;
    }
    if ('owner' in acquired) {
      if (await this.adapterRows.unclaimTurn(turn.id, token)) {
        await this.bus.send(busChannels.agentChatAdapterOwner.of(acquired.owner), { turnId: turn.id, tenantId: turn.tenant_id });
      }
      return false;
    }
    const { live: adapter, restored } = acquired;
    let prompt = turnText(inputs.messages, turn);
    if (restored === 'reset') {
      note({
        type: 'native_session_reset',
        status: 'completed',
        title: 'Agent session restarted',
        detail: 'The adapter could not restore its session; it was given a recap of this chat.',
      });
      const recap = recapOf(inputs.messages, turn);
      if (recap) prompt = `${recap}\n\n${prompt}`;
    } else if (restored === 'loaded') {
      note({ type: 'native_session_restored', status: 'completed', title: 'Agent session restored', detail: `session/load ${adapter.nativeId}` });
    }
    const git = new WorkspaceGit(this.sandbox, this.config.tasks, session.workspace, state.controller.signal);
    const baseTree = await git.tree().catch(() => null);

    let content = '';
    const raw: unknown[] = [];
    let rawBytes = 0;
    let savedAt = Date.now();
    let saving: Promise<unknown> = Promise.resolve();
    const append = (frame: Record<string, unknown>) => {
      this.live.append(streamId, JSON.stringify(frame)).catch(() => undefined);
    };
    const tools = new Map<string, Activity>();
    adapter.turn = {
      onUpdate: (update, n) => {
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
            saving = saving.then(() => this.leases.savePartial(turn.id, token, assistant.id, snapshot)).catch(() => undefined);
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
      },
      // Cancelling a turn answers its pending permission requests `cancelled` (ACP: the client must, after session/cancel).
      onPermission: (request, signal) =>
        this.permission(
          { session, turnId: turn.id, signal: AbortSignal.any([signal, state.controller.signal, adapter.proc.signal]), emit: append },
          request,
          note,
        ),
    };
    const onAbort = () => void adapter.proc.notify('session/cancel', { sessionId: adapter.nativeId });
    state.controller.signal.addEventListener('abort', onAbort, { once: true });
    let outcome: { status: 'completed' | 'failed' | 'cancelled'; error?: { type: string; message: string } };
    let usage: PromptUsage | undefined;
    try {
      const promptCall = adapter.proc.request<Acp.PromptResponse>(
        'session/prompt',
        { sessionId: adapter.nativeId, prompt: [{ type: 'text', text: prompt }] },
        this.config.agent.adapters.turnTimeoutMs,
      );
      const cancelGrace = new Promise<'grace'>((resolve) =>
        state.controller.signal.addEventListener('abort', () => setTimeout(() => resolve('grace'), CANCEL_GRACE_MS).unref(), { once: true }),
      );
      const r = await Promise.race([promptCall, cancelGrace]);
      if (r === 'grace') {
        // It did not stop when asked: the process goes (the next turn starts it again).
        await this.host.end(session.id, 'failed');
        outcome = { status: 'cancelled' };
      } else outcome = r.stopReason === 'cancelled' || state.cancelled ? { status: 'cancelled' } : { status: 'completed' };
      if (r !== 'grace' && (r as { usage?: PromptUsage }).usage) usage = (r as { usage?: PromptUsage }).usage;
      if (r !== 'grace' && r.stopReason === 'refusal')
        outcome = { status: 'failed', error: { type: 'adapter_refusal', message: 'the agent refused the prompt' } };
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
    await saving;
    if (halted()) return true;
    const diff = baseTree ? await git.diff(baseTree).catch(() => null) : null;
    if (diff)
      note({
        type: 'files_changed',
        status: 'completed',
        title: 'Files changed',
        detail: `${countFiles(diff)} file${countFiles(diff) === 1 ? '' : 's'} changed`,
      });
    if (outcome.status === 'completed') note({ type: 'completed', status: 'completed', title: 'Final answer' });
    else if (outcome.status === 'cancelled') note({ type: 'cancelled', status: 'cancelled', title: 'Cancelled' });
    else note({ type: 'failed', status: 'failed', title: 'The external agent failed', detail: outcome.error?.message });
    await this.finish(turn, token, streamId, {
      ...outcome,
      content,
      activities,
      started,
      raw,
      native: adapter.nativeId,
      session_adapter: session.adapter_id,
      diff: diff && baseTree ? { content: diff, base_tree: baseTree } : undefined,
      reset: restored === 'reset',
      gatewayKeyId: adapter.gatewayKeyId,
      usage,
    });
    return true;
  }

  /** A permission request goes to the approval coordinator; its disposition is an `approval` activity of the turn. */
  private async permission(
    ctx: PermissionContext,
    request: Acp.RequestPermissionRequest,
    note: (a: Omit<Activity, 'created_at'>) => void,
  ): Promise<Acp.RequestPermissionResponse> {
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

  private async finish(
    turn: TurnRow,
    token: string,
    streamId: string,
    r: {
      status: 'completed' | 'failed' | 'cancelled';
      content: string;
      error?: { type: string; message: string };
      activities: Activity[];
      started: Date;
      raw?: unknown[];
      native?: string;
      session_adapter: string;
      diff?: { content: string; base_tree: string };
      reset?: boolean;
      /** The adapter talked to this gateway with this key (its model calls are usage rows of the key). */
      gatewayKeyId?: string | null;
      usage?: PromptUsage;
    },
  ): Promise<void> {
    const def = this.catalog.find(r.session_adapter);
    const ended = await this.turns.end(
      turn,
      {
        status: r.status,
        content: r.content,
        error: r.error,
        diff: r.diff,
        metadata: {
          run_id: `agent_run_${turn.id.replace(/^turn_/, '')}`,
          adapter_id: r.session_adapter,
          adapter_name: def?.name ?? r.session_adapter,
          driver_kind: 'acp',
          native_session_id: r.native ?? '',
          cost_mode: r.gatewayKeyId ? 'gateway' : (def?.costMode ?? 'external'),
          // Where the turn's metered cost is read from: the key's usage rows between its start and end.
          ...(r.gatewayKeyId ? { gateway_window: { api_key_id: r.gatewayKeyId, from: r.started.toISOString(), to: new Date().toISOString() } } : {}),
          ...(r.usage
            ? {
                usage: {
                  input_tokens: r.usage.inputTokens,
                  output_tokens: r.usage.outputTokens,
                  cached_input_tokens: r.usage.cachedReadTokens ?? 0,
                  total_tokens: r.usage.totalTokens,
                },
              }
            : {}),
          raw_output: r.raw?.length ? JSON.stringify(r.raw) : '',
          activities: r.activities,
          ...(r.reset ? { native_session_reset: true } : {}),
        },
      },
      token,
    );
    if (!ended) rootLogger().warn({ turn_id: turn.id }, 'external agent turn ended elsewhere (lease lost)');
    await this.markDone(streamId);
  }

  private async markDone(streamId: string): Promise<void> {
    await this.live.markDone(streamId).catch(() => undefined);
  }
}

/** The token counts an agent reports with its prompt answer (ACP's unstable `usage`; Claude Code sends it). */
interface PromptUsage {
  inputTokens: number;
  outputTokens: number;
  cachedReadTokens?: number;
  totalTokens: number;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const countFiles = (diff: string): number => (diff.match(/^diff --git /gm) ?? []).length;

/** The user's prompt of this turn. */
function turnText(messages: MessageRow[], turn: TurnRow): string {
  return messages.find((m) => m.id === turn.user_message_id)?.content ?? '';
}

/** The transcript before this turn, for an agent whose native session was lost (bounded). */
function recapOf(messages: MessageRow[], turn: TurnRow): string {
  const before = messages.filter((m) => m.id !== turn.user_message_id && m.id !== turn.assistant_message_id && m.content && m.status !== 'superseded');
  if (before.length === 0) return '';
  const lines = before.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}`);
  let text = lines.join('\n');
  if (text.length > 16_000) text = `…${text.slice(-16_000)}`;
  return `[Hecate: your earlier session could not be restored. The conversation so far:]\n${text}\n[End of recap. The new message follows.]`;
}
