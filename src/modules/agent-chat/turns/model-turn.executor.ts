import { Inject, Injectable } from '@nestjs/common';
import { retryTransient } from '@core/database/retry-transient';
import { DomainError } from '@core/http/domain-error';
import { asDomainError, toErrorEnvelope } from '@core/http/error-envelope';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { InferenceService, type InferenceMessage, type LiveDeltaFrame } from '@modules/inference';
import type { MessageRow, TurnRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { GuidanceRepository } from '../guidance/guidance.repository';
import { TurnLeaseRepository } from './turn-lease.repository';
import { AgentChatRepository } from '../agent-chat.repository';

/** A turn's failure that is not a DomainError: the model call's (kept on the turn as `{type, message}`). */
const modelFailure = (message: string): DomainError => new DomainError('model_error', 502, message);

/** How often a running model turn writes its partial reply to Postgres (what a successor continues from without the buffer). */
const PARTIAL_EVERY_MS = 1000;

/**
 * One model turn on the worker that claimed it (docs/design.md §11.2–11.4): guidance waiting for the session first,
 * then the model's reply streamed into the turn's live stream with the partial kept in Postgres, then the turn ended
 * and its stream marked done. A turn taken over from a dead worker starts from what its stream (or, without it,
 * Postgres) already holds (docs/takeover.md).
 */
@Injectable()
export class ModelTurnExecutor {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly leases: TurnLeaseRepository,
    private readonly guidanceRows: GuidanceRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly inference: InferenceService,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  async run(turn: TurnRow, token: string, state: { controller: AbortController; cancelled: boolean }, halted: () => boolean): Promise<void> {
    const inputs = await retryTransient(() => this.repo.turnInputs(turn.tenant_id, turn.session_id));
    let messages = inputs?.messages ?? [];
    let assistant = messages.find((m) => m.id === turn.assistant_message_id);
    const session = inputs?.session;
    if (!assistant || !session) return; // deleted under us: nothing to write to
    const { prefix, streamId, restartFrom } = await this.resumePoint(turn, token, assistant);
    if (!state.cancelled && inputs.pendingGuidance > 0 && (await this.takeGuidance(turn, token, streamId))) {
      messages = await retryTransient(() => this.repo.messages(turn.session_id));
      assistant = messages.find((m) => m.id === turn.assistant_message_id)!;
    }
    if (state.cancelled) {
      await this.turns.end(turn, { status: 'cancelled', content: prefix }, token);
      await this.markDone(streamId);
      return;
    }
    const system = turn.system_prompt || session.system_prompt;
    const request: InferenceMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...historyOf(messages, assistant)];
    // What the reply holds so far: the partial until the call says whether it continues it, then this attempt's text.
    let kept = prefix;
    let text = prefix;
    let savedAt = Date.now();
    let saving: Promise<unknown> = Promise.resolve();
    try {
      // Routing reads Postgres before anything is sent upstream: a dropped connection there is retried (nothing was billed).
      const live = await retryTransient(() =>
        this.inference.streamLive(
          { messages: request, model: turn.model, provider: turn.provider || undefined, ...(prefix ? { continuation: prefix } : {}) },
          {
            tenantId: turn.tenant_id,
            apiKeyId: session.api_key_id ?? undefined,
            agentId: session.agent_id || undefined,
            origin: { requestId: turn.request_id ?? `job_${turn.id}`, traceId: turn.trace_id ?? undefined },
            signal: state.controller.signal,
            endpoint: 'agent_chat',
          },
          { streamId, restartFrom },
        ),
      );
      if (!live.continued) kept = text = '';
      for await (const { frame } of live.frames) {
        text += contentOf(frame);
        if (Date.now() - savedAt >= PARTIAL_EVERY_MS) {
          savedAt = Date.now();
          const snapshot = text;
          saving = saving
            .then(() => this.leases.savePartial(turn.id, token, assistant.id, snapshot))
            .catch(ignoreFailure('partial reply save', 'the next save (or the turn end) writes the longer reply'));
        }
      }
      const result = await live.result;
      await saving;
      if (halted()) return;
      const status = state.cancelled ? 'cancelled' : 'completed';
      await this.turns.end(turn, { status, content: kept + result.text, provider: result.provider, model: result.model }, token);
    } catch (err) {
      await saving;
      if (halted()) return;
      if (state.cancelled) await this.turns.end(turn, { status: 'cancelled', content: text }, token);
      else {
        const error = toErrorEnvelope(asDomainError(err, modelFailure), 'brief');
        await this.turns.end(turn, { status: 'failed', content: text, error }, token);
      }
    }
    await this.markDone(streamId);
  }

  /**
   * Where this attempt starts: the turn's live stream as an earlier attempt left it (its deltas are the partial; a new
   * attempt's frames follow at the next index, and `restartFrom` is the first of the partial's deltas, where a `reset`
   * discards from); after a lost buffer, the partial persisted in Postgres, on a new stream id the turn records (clients
   * following the old one get the persisted partial with `resume_fallback`; a reset there discards it whole).
   */
  private async resumePoint(turn: TurnRow, token: string, assistant: MessageRow): Promise<{ prefix: string; streamId: string; restartFrom?: number }> {
    if (turn.attempts <= 1) return { prefix: '', streamId: turn.stream_id };
    let prefix = '';
    let index = 0;
    let restartFrom = 0;
    for (;;) {
      const r = await this.live.read(turn.stream_id, index, { limit: 1000 });
      if (r.expired && index === 0) break;
      for (const c of r.chunks) {
        const frame = JSON.parse(c.data) as LiveDeltaFrame & { type?: string; from_index?: number };
        // An earlier takeover's reset: what came before it is not part of the partial.
        if (frame.type === 'reset') {
          prefix = '';
          restartFrom = 0;
        } else if (frame.type === undefined) {
          restartFrom ||= c.index;
          prefix += contentOf(frame);
        }
        index = c.index;
      }
      if (r.chunks.length === 0) return { prefix, streamId: turn.stream_id, ...(restartFrom ? { restartFrom } : {}) };
    }
    const streamId = `${turn.id}.${turn.attempts}`;
    await retryTransient(() => this.repo.transaction((m) => this.repo.updateTurn(m, turn.id, { stream_id: streamId }, { token })));
    turn.stream_id = streamId;
    return { prefix: assistant.content, streamId, ...(assistant.content ? { restartFrom: 1 } : {}) };
  }

  /**
   * Guidance waiting for the session is taken by this turn's model call (docs/design.md §11.5): consumed in a lease-checked
   * transaction that makes it transcript messages before the reply, then announced on the turn's stream.
   */
  private async takeGuidance(turn: TurnRow, token: string, streamId: string): Promise<boolean> {
    const taken = await retryTransient(() =>
      this.repo.transaction(async (m) => ((await this.leases.guardTurn(m, turn.id, token)) ? this.guidanceRows.consumeGuidanceIn(m, turn, 1) : [])),
    );
    for (const g of taken) {
      await this.live.append(
        streamId,
        JSON.stringify({ type: 'message', id: g.message_id, role: 'user', content: g.content, metadata: { ...g.metadata, guidance_id: g.guidance_id } }),
      );
      await this.live.append(
        streamId,
        JSON.stringify({ type: 'guidance.consumed', guidance_id: g.guidance_id, turn_id: turn.id, model_call_index: 1, message_id: g.message_id }),
      );
    }
    return taken.length > 0;
  }

  private async markDone(streamId: string): Promise<void> {
    await this.live
      .markDone(streamId)
      .catch((err: unknown) => rootLogger().warn({ stream_id: streamId, err: String(err) }, 'could not mark the live stream done'));
  }
}

const contentOf = (f: LiveDeltaFrame & { type?: string }): string => (f.type === undefined && typeof f.content === 'string' ? f.content : '');

/** The transcript the model sees: settled user and assistant messages before this turn's reply (model and agent segments alike). */
function historyOf(messages: MessageRow[], upTo: MessageRow): InferenceMessage[] {
  return messages
    .filter(
      (m) =>
        m.sequence < upTo.sequence &&
        m.content !== '' &&
        m.status !== 'superseded' &&
        (m.role === 'user' || m.status === 'completed' || m.status === 'cancelled'),
    )
    .map((m) => ({ role: m.role, content: m.content }));
}
