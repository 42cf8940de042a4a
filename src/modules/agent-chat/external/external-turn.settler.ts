import { Inject, Injectable } from '@nestjs/common';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { rootLogger } from '@core/logging/logger';
import { AdapterCatalog } from '@modules/agent-adapters';
import type { MessageRow, TurnRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from '../turns/agent-chat-turns.service';

/** One entry of an external-agent turn's `activities` (what the agent did, as the transcript shows it). */
export type Activity = { type: string; status: string; title: string; detail?: string; created_at: string; tool_call_id?: string; approval_id?: string };
export type Note = (a: Omit<Activity, 'created_at'>) => void;

export type ExternalOutcome = { status: 'completed' | 'failed' | 'cancelled'; error?: { type: string; message: string } };

/** The token counts an agent reports with its prompt answer (ACP's unstable `usage`; Claude Code sends it). */
export interface PromptUsage {
  inputTokens: number;
  outputTokens: number;
  cachedReadTokens?: number;
  totalTokens: number;
}

/** How an external-agent turn ended, with what its transcript keeps. */
export interface ExternalTurnResult extends ExternalOutcome {
  content: string;
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
}

/**
 * The settle phase of an external-agent turn: the turn ends (message, turn, session in one token-checked transaction)
 * with its adapter, cost and transcript metadata, and its live stream is marked done.
 */
@Injectable()
export class ExternalTurnSettler {
  constructor(
    private readonly turns: AgentChatTurnsService,
    private readonly catalog: AdapterCatalog,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  /** The adapter's display name (its id when this worker does not know it). */
  adapterName(adapterId: string): string {
    return this.catalog.find(adapterId)?.name ?? adapterId;
  }

  /** Appends a frame to the turn's live stream; readers that miss it get the transcript when the turn ends. */
  append(streamId: string, frame: Record<string, unknown>): void {
    this.live.append(streamId, JSON.stringify(frame)).catch(ignoreFailure('live stream append', 'the ended turn stores the transcript the frame was part of'));
  }

  /** A turn whose worker was lost: its adapter process went with it, so it cannot go on (the next turn restores the session). */
  async interrupted(turn: TurnRow, token: string, assistant: MessageRow): Promise<void> {
    await this.turns.end(
      turn,
      {
        status: 'failed',
        content: assistant.content,
        error: { type: 'adapter_interrupted', message: 'the worker running this turn was lost; its adapter process ended with it' },
      },
      token,
    );
    await this.markDone(turn.stream_id);
  }

  async finish(turn: TurnRow, token: string, streamId: string, r: ExternalTurnResult): Promise<void> {
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
          ...(r.usage ? { usage: usageOf(r.usage) } : {}),
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
    await this.live
      .markDone(streamId)
      .catch(ignoreFailure('live stream markDone', 'the turn already ended in Postgres; a stream reader that sees no new frames re-reads the turn from there'));
  }
}

const usageOf = (u: PromptUsage) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cached_input_tokens: u.cachedReadTokens ?? 0,
  total_tokens: u.totalTokens,
});
