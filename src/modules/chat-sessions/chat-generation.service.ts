import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { InferenceMessage, InferenceRequest, InferenceResult, InferenceService, type LiveResetFrame, LiveTee, resetFrame } from '@modules/inference';
import type { DeltaFrame } from './chat-delta-frames';
import type { ChatMessageJson, GeneratedReply } from './chat-message';
import type { NewProviderCall } from './chat-write-types';

export interface GenerationRequest {
  tenantId: string;
  messages: ChatMessageJson[];
  model?: string;
  provider?: string;
  /** For the usage ledger (e.g. `/hecate/v1/chat/sessions/messages`). */
  endpoint: string;
  /** The HTTP request the generation serves: its ids go on the usage row and the trace. */
  origin: RequestOrigin | null;
  /** `continue`: the partial reply, continued only by a model that continues prefills (docs/takeover.md). */
  continuation?: string;
}

export type CallRecord = Omit<NewProviderCall, 'id' | 'status'>;

export interface GenerationStream {
  provider: string;
  model: string;
  /** Delta frames with their live-buffer index (the SSE id). */
  frames: AsyncIterable<{ index: number; frame: DeltaFrame }>;
  /** The assembled reply and its call (after the frames end, or after an abort: the partial reply). */
  result: Promise<{ reply: GeneratedReply; call: CallRecord }>;
  /** A `continuation` the model did not continue: the reply is anew, after this `reset` frame on the live stream. */
  reset?: { index: number; frame: LiveResetFrame };
}

const replyOf = (r: InferenceResult): GeneratedReply => ({
  text: r.text,
  content_blocks: r.content_blocks as Array<Record<string, unknown>>,
  tool_calls: r.tool_calls,
});

const callOf = (r: InferenceResult, requestedModel: string | undefined): CallRecord => ({
  requestId: r.request_id,
  provider: r.provider,
  providerKind: r.provider_kind,
  model: r.model,
  requestedModel: requestedModel ?? null,
  routeReason: r.route_reason,
  costMicrosUsd: r.cost_micros_usd,
  promptTokens: r.usage.input_tokens,
  completionTokens: r.usage.output_tokens,
});

/**
 * The one place chat sessions call a model: through InferenceService (routing, failover, ledger, traces), always
 * streaming with the deltas teed into the turn's live stream, so a stop keeps the partial reply.
 */
@Injectable()
export class ChatGenerationService {
  constructor(private readonly inference: InferenceService) {}

  private request(req: GenerationRequest): InferenceRequest {
    // Stored messages were validated when they entered the session (ingress or DTO); extra client fields pass through.
    return {
      messages: req.messages as unknown as InferenceMessage[],
      model: req.model,
      provider: req.provider,
      ...(req.continuation ? { continuation: req.continuation } : {}),
    };
  }

  private ctx(req: GenerationRequest, signal?: AbortSignal) {
    return { tenantId: req.tenantId, signal, endpoint: req.endpoint, origin: req.origin };
  }

  async stream(req: GenerationRequest, signal: AbortSignal, live: LiveTee): Promise<GenerationStream> {
    // A continuation that is not continued restarts the reply: the partial shown before this stream is reset.
    const restartFrom = req.continuation ? 1 : undefined;
    const s = await this.inference.streamLive(this.request(req), this.ctx(req, signal), { ...live, restartFrom });
    return {
      provider: s.provider,
      model: s.model,
      frames: s.frames,
      result: s.result.then((r) => ({ reply: replyOf(r), call: callOf(r, req.model) })),
      ...(s.reset ? { reset: { index: s.lastIndex(), frame: resetFrame(restartFrom!) } } : {}),
    };
  }

  async complete(req: GenerationRequest, signal?: AbortSignal): Promise<{ reply: GeneratedReply; call: CallRecord }> {
    const r = await this.inference.complete(this.request(req), this.ctx(req, signal));
    return { reply: replyOf(r), call: callOf(r, req.model) };
  }
}
