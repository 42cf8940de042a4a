import { sleep } from '@core/async/sleep';
import { Inject, Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { DomainError } from '@core/http/domain-error';
import { asDomainError, fromErrorEnvelope, toErrorEnvelope } from '@core/http/error-envelope';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { ChatCompactionService } from './chat-compaction.service';
import type { LiveResetFrame } from '@modules/inference';
import { DeltaFrame, FrameAccumulator } from './chat-delta-frames';
import { textOf } from './chat-message';
import { ChatGenerationService, GenerationStream } from './chat-generation.service';
import { AbortReason, ChatInflightService } from './chat-inflight.service';
import type { ChatMessageRow } from './chat-rows';
import { ChatSessionRepository } from './chat-session.repository';
import { ContinueChatMessageDto, EditChatMessageDto, RegenerateChatMessageDto, SendChatMessageDto } from './chat-session.dto';
import { formatUsd } from '@core/money';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { toChatMessageResponse, toProviderCallResponse } from './chat-session-view.dto';
import { withTurnIds } from './chat-sessions.errors';
import { BegunTurn, ChatTurnLedgerService, FinishedTurn, ReplayedTurn, TurnOutcome } from './chat-turn-ledger.service';
import type { TurnSink } from './chat-turn-sse';

type Options = { model?: string; provider?: string };
/** How long an idempotent retry waits for the original generation to finish. */
const REPLAY_WAIT_MS = 10 * 60_000;
export type SinkFactory = (() => TurnSink) | undefined;

/** A generation failure that is not a DomainError: the provider's (stored on the failed reply as such). */
const upstreamFailure = (message: string): DomainError => new DomainError('upstream_error', 502, message, { userMessage: 'The provider failed to answer.' });

/**
 * Server-side conversations (docs/api.md §3): send, regenerate, edit, continue. Each turn is begun in one
 * transaction (messages + branch lock), generated through the gateway router with its deltas teed into
 * LiveStreamBuffer, and finished in another (reply, provider call, repaired tool calls).
 */
@Injectable()
export class ChatTurnsService {
  constructor(
    private readonly ledger: ChatTurnLedgerService,
    private readonly inflight: ChatInflightService,
    private readonly generation: ChatGenerationService,
    private readonly compaction: ChatCompactionService,
    private readonly sessions: ChatSessionRepository,
    @Inject(LiveStreamBuffer) private readonly buffer: LiveStreamBuffer,
  ) {}

  async send(tenantId: string, sessionId: string, dto: SendChatMessageDto, sink: SinkFactory, origin: RequestOrigin | null) {
    const target = await this.compaction.compactIfNeeded(tenantId, sessionId, dto, origin);
    const begun = await this.ledger.beginSend(tenantId, target, {
      content: dto.content,
      parentId: target === sessionId ? dto.parent_id : undefined,
      clientRequestId: dto.client_request_id,
      owner: this.inflight.owner,
    });
    if ('replayed' in begun) return this.replayed(begun, sink);
    return this.run(begun, dto, origin, sink, target === sessionId ? undefined : sessionId);
  }

  async regenerate(tenantId: string, sessionId: string, messageId: string, dto: RegenerateChatMessageDto, sink: SinkFactory, origin: RequestOrigin | null) {
    return this.run(await this.ledger.beginRegenerate(tenantId, sessionId, { messageId, owner: this.inflight.owner }), dto, origin, sink);
  }

  async edit(tenantId: string, sessionId: string, messageId: string, dto: EditChatMessageDto, sink: SinkFactory, origin: RequestOrigin | null) {
    const begun = await this.ledger.beginEdit(tenantId, sessionId, {
      messageId,
      content: dto.content,
      regenerate: dto.regenerate ?? true,
      owner: this.inflight.owner,
    });
    if ('edited' in begun) {
      const data = { session_id: sessionId, user_message: toChatMessageResponse(begun.edited), assistant_message: null };
      const s = sink?.();
      s?.done(data);
      return data;
    }
    return this.run(begun, dto, origin, sink);
  }

  async continue(tenantId: string, sessionId: string, messageId: string, dto: ContinueChatMessageDto, sink: SinkFactory, origin: RequestOrigin | null) {
    return this.run(await this.ledger.beginContinue(tenantId, sessionId, { messageId, owner: this.inflight.owner }), dto, origin, sink);
  }

  /** `origin`: the request's ids, for the usage row and trace of the generation. */
  private async run(turn: BegunTurn, opts: Options, origin: RequestOrigin | null, sinkFactory: SinkFactory, compactedFrom?: string) {
    const controller = await this.inflight.track(turn.generationId, turn.sessionId, turn.leaseToken);
    const sink = sinkFactory?.();
    sink?.created({
      session_id: turn.sessionId,
      ...(compactedFrom ? { compacted_from_session_id: compactedFrom } : {}),
      user_message_id: turn.userMessage?.id ?? null,
      assistant_message_id: turn.assistant.id,
      parent_id: turn.assistant.parentId,
      stream_id: turn.generationId,
    });
    const outcome = await this.generate(turn, opts, origin, controller, sink);
    const reason = controller.signal.aborted ? (controller.signal.reason as AbortReason) : undefined;
    let finished: FinishedTurn;
    try {
      finished = await this.ledger.finish(turn, outcome, turn.leaseToken);
    } catch (err) {
      if (!sink) throw err;
      rootLogger().error({ request_id: origin?.requestId, err: String(err), sessionId: turn.sessionId }, 'chat turn could not be finalised');
      sink.error({ error: toErrorEnvelope(asDomainError(err, upstreamFailure)), session_id: turn.sessionId, assistant_message_id: turn.assistant.id });
      return { session_id: turn.sessionId };
    } finally {
      this.inflight.release(turn.generationId);
      if (reason === 'stop') await this.inflight.announceStopped(turn.sessionId, turn.generationId);
    }
    const data = this.view(turn.sessionId, turn.userMessage, finished, compactedFrom);
    if (finished.assistant.status === 'failed') {
      sink?.error({ error: finished.assistant.errorJson, ...data });
      if (!sink)
        throw withTurnIds(fromErrorEnvelope(finished.assistant.errorJson ?? {}), {
          session_id: turn.sessionId,
          user_message_id: turn.userMessage?.id ?? null,
          assistant_message_id: turn.assistant.id,
        });
      return data;
    }
    sink?.done(data);
    return data;
  }

  /** Streams the reply; never throws (a failure is an outcome). */
  private async generate(
    turn: BegunTurn,
    opts: Options,
    origin: RequestOrigin | null,
    controller: AbortController,
    sink: TurnSink | undefined,
  ): Promise<TurnOutcome> {
    const acc = new FrameAccumulator();
    let stream: GenerationStream | undefined;
    // `continue`: the partial goes as a continuation (a prefill only for a model that continues one, docs/takeover.md).
    const partial = turn.kind === 'continue' && turn.replay.at(-1)?.role === 'assistant' ? textOf(turn.replay.at(-1)!.content) : '';
    const messages = partial ? turn.replay.slice(0, -1) : turn.replay;
    try {
      stream = await this.generation.stream(
        {
          tenantId: turn.tenantId,
          messages,
          ...(partial ? { continuation: partial } : {}),
          model: opts.model ?? turn.lastModel ?? undefined,
          provider: opts.provider,
          endpoint: `/hecate/v1/chat/sessions/${turn.kind}`,
          origin,
        },
        controller.signal,
        { streamId: turn.generationId },
      );
      if (stream.reset) sink?.reset(stream.reset.index, stream.reset.frame);
      for await (const { index, frame } of stream.frames) {
        acc.add(frame);
        sink?.delta(index, frame);
      }
      const { reply, call } = await stream.result;
      return { status: 'complete', reply, call, restarted: !!stream.reset };
    } catch (err) {
      const restarted = !!stream?.reset;
      if (controller.signal.aborted) {
        // An aborted stream's result may reject; what was accumulated stands in for it.
        const cut = stream ? await stream.result.catch(() => undefined) : undefined;
        const reason = controller.signal.reason as AbortReason;
        return { status: reason === 'stop' ? 'stopped' : 'incomplete', reply: cut?.reply ?? acc.reply(), call: cut?.call ?? null, restarted };
      }
      rootLogger().warn({ request_id: origin?.requestId, err: String(err), sessionId: turn.sessionId }, 'chat generation failed');
      const call = stream
        ? {
            requestId: '',
            provider: stream.provider,
            providerKind: '',
            model: stream.model,
            requestedModel: opts.model ?? null,
            routeReason: null,
            costMicrosUsd: 0,
            promptTokens: 0,
            completionTokens: 0,
          }
        : null;
      return { status: 'failed', reply: acc.reply(), call, error: toErrorEnvelope(asDomainError(err, upstreamFailure)), restarted };
    } finally {
      await this.buffer
        .markDone(turn.generationId)
        .catch(ignoreFailure('marking a chat turn stream done', 'replaying readers stop once the message row leaves in_progress; the stream keys expire'));
    }
  }

  /** A retry with the same client_request_id: the same ids, no second generation (waits for one in flight). */
  private async replayed(r: ReplayedTurn, sinkFactory: SinkFactory) {
    const sink = sinkFactory?.();
    sink?.created({
      session_id: r.sessionId,
      user_message_id: r.userMessage.id,
      assistant_message_id: r.assistant?.id ?? null,
      parent_id: r.userMessage.id,
      replayed: true,
    });
    let assistant = r.assistant;
    if (assistant && assistant.status === 'in_progress') {
      let after = 0;
      const deadline = Date.now() + REPLAY_WAIT_MS;
      while (Date.now() < deadline) {
        // Redis unreachable reads as an expired buffer: the loop goes on following the message row in Postgres.
        const page = await this.buffer.read(assistant.id, after, { blockMs: 1000 }).catch(() => ({ chunks: [], done: false, expired: true }));
        for (const c of page.chunks) {
          after = c.index;
          const frame = JSON.parse(c.data) as DeltaFrame | LiveResetFrame;
          if ('type' in frame) sink?.reset(c.index, frame);
          else sink?.delta(c.index, frame);
        }
        assistant = (await this.sessions.message(r.sessionId, assistant.id)) ?? assistant;
        if (assistant.status !== 'in_progress' && (page.done || page.expired || page.chunks.length === 0)) break;
        if (page.expired) await sleep(200);
      }
    }
    const call = assistant?.producedByCallId ? await this.sessions.call(r.sessionId, assistant.producedByCallId) : null;
    const data = this.view(r.sessionId, r.userMessage, assistant ? { skipped: false, assistant, call, toolResults: [] } : null);
    if (assistant?.status === 'failed') {
      sink?.error({ error: assistant.errorJson, ...data });
      if (!sink)
        throw withTurnIds(fromErrorEnvelope(assistant.errorJson ?? {}), {
          session_id: r.sessionId,
          user_message_id: r.userMessage.id,
          assistant_message_id: assistant.id,
        });
      return data;
    }
    sink?.done(data);
    return data;
  }

  private view(sessionId: string, user: ChatMessageRow | null, finished: FinishedTurn | null, compactedFrom?: string) {
    const call = finished?.call ?? null;
    return {
      session_id: sessionId,
      ...(compactedFrom ? { compacted_from_session_id: compactedFrom } : {}),
      user_message: user ? toChatMessageResponse(user) : null,
      assistant_message: finished ? toChatMessageResponse(finished.assistant) : null,
      tool_results: (finished?.toolResults ?? []).map((m) => toChatMessageResponse(m)),
      provider_call: call ? toProviderCallResponse(call) : null,
      usage: call
        ? { prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens, total_tokens: call.promptTokens + call.completionTokens }
        : null,
      cost_micros_usd: call?.costMicrosUsd ?? 0,
      cost_usd: formatUsd(call?.costMicrosUsd ?? 0),
    };
  }
}
