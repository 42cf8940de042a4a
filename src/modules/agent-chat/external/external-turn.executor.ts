import { Inject, Injectable } from '@nestjs/common';
import { busChannels, EventBus } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { COMMAND_SANDBOX, type CommandSandbox, WorkspaceGit } from '@modules/workspaces';
import type { MessageRow, SessionRow, TurnRow } from '../agent-chat-rows';
import { AgentChatRepository } from '../agent-chat.repository';
import { AdapterSessionHost, type LiveAdapter, type Restored } from '@modules/external-agents';
import { TurnLeaseRepository } from '../turns/turn-lease.repository';
import { errorText, ExternalPromptPhase, type PromptResult, type TurnState } from './external-turn.prompt';
import { type Activity, ExternalTurnSettler, type Note } from './external-turn.settler';

export type { TurnState } from './external-turn.prompt';

/** The turn being run, with what its phases share: its transcript, its activities, its start. */
interface RunContext {
  turn: TurnRow;
  token: string;
  session: SessionRow;
  messages: MessageRow[];
  assistant: MessageRow;
  state: TurnState;
  activities: Activity[];
  note: Note;
  started: Date;
}

/**
 * One External Agent turn on the worker holding the session's adapter (docs/api.md §4, docs/design.md §11.2–11.4): the
 * adapter is acquired (started or restored here, or the turn is forwarded to the worker that holds it), prompted
 * (ExternalPromptPhase: its updates become the turn's live stream and transcript, permission requests go to the
 * approval coordinator), and the turn settles with the workspace diff (ExternalTurnSettler). Adapter failures (a crash,
 * stdout that is not ACP, an oversized update, no answer within the turn ceiling) end the turn `failed` with the error
 * while the transcript stays intact.
 */
@Injectable()
export class ExternalTurnExecutor {
  constructor(
    private readonly config: AppConfig,
    private readonly repo: AgentChatRepository,
    private readonly leases: TurnLeaseRepository,
    private readonly host: AdapterSessionHost,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly prompts: ExternalPromptPhase,
    private readonly settler: ExternalTurnSettler,
  ) {}

  /** Runs the claimed turn; false when it belongs to another worker (handed back and forwarded there). */
  async run(turn: TurnRow, token: string, state: TurnState, halted: () => boolean): Promise<boolean> {
    const inputs = await this.repo.turnInputs(turn.tenant_id, turn.session_id);
    const session = inputs?.session;
    const assistant = inputs?.messages.find((m) => m.id === turn.assistant_message_id);
    if (!session || !assistant) return true;
    // Its adapter process went with the worker that ran it: the turn cannot go on; the next one restores the session.
    if (turn.attempts > 1) return this.settler.interrupted(turn, token, assistant).then(() => true);
    const activities: Activity[] = [];
    const note: Note = (a) => activities.push({ ...a, created_at: new Date().toISOString() });
    const ctx: RunContext = { turn, token, session, messages: inputs.messages, assistant, state, activities, note, started: new Date() };
    note({
      type: 'started',
      status: 'completed',
      title: 'Starting external agent',
      detail: `${this.settler.adapterName(session.adapter_id)} in ${session.workspace}`,
    });
    if (state.cancelled) {
      await this.settler.finish(turn, token, turn.stream_id, {
        status: 'cancelled',
        content: '',
        activities,
        started: ctx.started,
        session_adapter: session.adapter_id,
      });
      return true;
    }
    const acquired = await this.acquire(ctx);
    if (acquired === 'settled') return true;
    if (acquired === 'forwarded') return false;
    const { live: adapter, restored } = acquired;
    const git = new WorkspaceGit(this.sandbox, this.config.tasks, session.workspace, state.controller.signal);
    // No base tree (not a git workspace, or git failed): the turn records no diff.
    const baseTree = await git.tree().catch(() => null);
    const result = await this.prompts.prompt({
      session,
      turn,
      token,
      assistant,
      adapter,
      text: this.promptText(ctx, adapter, restored),
      state,
      activities,
      note,
    });
    if (halted()) return true;
    // The diff is what the transcript shows of the files changed; without it the turn still settles.
    const diff = baseTree ? await git.diff(baseTree).catch(() => null) : null;
    await this.settle(ctx, adapter, restored, result, diff && baseTree ? { content: diff, base_tree: baseTree } : undefined);
    return true;
  }

  /** The session's adapter, here; 'forwarded' when another worker holds it, 'settled' when it did not start. */
  private async acquire(ctx: RunContext): Promise<{ live: LiveAdapter; restored: Restored } | 'forwarded' | 'settled'> {
    const { turn, token, session, note } = ctx;
    let acquired: { live: LiveAdapter; restored: Restored } | { owner: string };
    try {
      acquired = await this.host.acquire(session);
    } catch (err) {
      note({ type: 'failed', status: 'failed', title: 'The external agent did not start', detail: errorText(err) });
      await this.settler.finish(turn, token, turn.stream_id, {
        status: 'failed',
        content: '',
        error: { type: 'adapter_start_failed', message: errorText(err) },
        activities: ctx.activities,
        started: ctx.started,
        session_adapter: session.adapter_id,
      });
      return 'settled';
    }
    if (!('owner' in acquired)) return acquired;
    if (await this.leases.unclaimTurn(turn.id, token)) {
      await this.bus.send(busChannels.agentChatAdapterOwner.of(acquired.owner), { turnId: turn.id, tenantId: turn.tenant_id });
    }
    return 'forwarded';
  }

  /** The user's prompt; after a lost native session, with a recap of the chat before it. */
  private promptText({ messages, turn, note }: RunContext, adapter: LiveAdapter, restored: Restored): string {
    const prompt = turnText(messages, turn);
    if (restored === 'loaded' || restored === 'resumed') {
      const method = restored === 'loaded' ? 'session/load' : 'session/resume';
      note({ type: 'native_session_restored', status: 'completed', title: 'Agent session restored', detail: `${method} ${adapter.nativeId}` });
    }
    if (restored !== 'reset') return prompt;
    note({
      type: 'native_session_reset',
      status: 'completed',
      title: 'Agent session restarted',
      detail: 'The adapter could not restore its session; it was given a recap of this chat.',
    });
    const recap = recapOf(messages, turn);
    return recap ? `${recap}\n\n${prompt}` : prompt;
  }

  /** The closing activities (files changed, the outcome), then the turn's end with its transcript. */
  private async settle(
    ctx: RunContext,
    adapter: LiveAdapter,
    restored: Restored,
    result: PromptResult,
    diff: { content: string; base_tree: string } | undefined,
  ) {
    const { note, session } = ctx;
    const { outcome } = result;
    if (diff) {
      const n = countFiles(diff.content);
      note({ type: 'files_changed', status: 'completed', title: 'Files changed', detail: `${n} file${n === 1 ? '' : 's'} changed` });
    }
    if (outcome.status === 'completed') note({ type: 'completed', status: 'completed', title: 'Final answer' });
    else if (outcome.status === 'cancelled') note({ type: 'cancelled', status: 'cancelled', title: 'Cancelled' });
    else note({ type: 'failed', status: 'failed', title: 'The external agent failed', detail: outcome.error?.message });
    await this.settler.finish(ctx.turn, ctx.token, ctx.turn.stream_id, {
      ...outcome,
      content: result.content,
      activities: ctx.activities,
      started: ctx.started,
      raw: result.raw,
      native: adapter.nativeId,
      session_adapter: session.adapter_id,
      diff,
      reset: restored === 'reset',
      gatewayKeyId: adapter.gatewayKeyId,
      usage: result.usage,
    });
  }
}

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
