import { Inject, Injectable } from '@nestjs/common';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { formatUsd } from '@core/money';
import { transportError, UpstreamError } from '@modules/providers';
import type { InferenceRouteInfo, InferenceContext } from './call-types';
import { type CostCap, InferenceEngineService, maxTokensOf } from './inference-engine.service';
import { type InferenceRequest, prepareInternal } from './inference-request';
import { liveFrameOf, type LiveDeltaFrame, resetFrame } from './live-frames';
import type { ContentBlock, InferenceDelta, Json, NormalizedUsage, StopReason, ToolCall, WireProtocol } from './protocol/normalized';
import { normalizeAnthropicResponse, normalizeOpenaiResponse } from './protocol/response-translation';
import { decodeUpstreamStream, StreamAccumulator } from './stream-pipeline';
import type { PreparedRequest } from './upstream-call';

/** Tee of a stream's deltas into LiveStreamBuffer: each frame gets the buffer's index (the SSE id of live streams). */
export interface LiveTee {
  streamId: string;
  /**
   * For a reader that needs no frame's index (the agent loop): frames are appended without waiting for each to be
   * stored (one connection keeps them in order) and yield index 0; the stream ends once every append has settled.
   */
  unindexed?: boolean;
  /**
   * This call re-makes one an earlier attempt streamed part of (a takeover; docs/takeover.md): unless it continues that
   * partial (`continued`), a `reset` frame from this index goes on the stream before its first delta.
   */
  restartFrom?: number;
}

export interface InferenceResult extends InferenceRouteInfo {
  id: string;
  text: string;
  content_blocks: ContentBlock[];
  tool_calls: ToolCall[];
  stop_reason: StopReason | null;
  usage: { input_tokens: number; output_tokens: number; cached_input_tokens: number };
  cost_micros_usd: number;
  cost_usd: string;
  /** Protocol of `raw` (the upstream's). */
  protocol: WireProtocol;
  /** The upstream response body (non-streaming calls only). */
  raw?: Json;
}

export interface InferenceStream extends InferenceRouteInfo {
  deltas: AsyncIterable<InferenceDelta>;
  /** The request's `continuation` was sent as a prefill: the reply continues it (false: the reply is anew). */
  continued: boolean;
  /** The assembled result (after the deltas end; after an abort, the partial reply). */
  result: Promise<InferenceResult>;
}

/** A stream teed into LiveStreamBuffer: frames with their buffer index instead of raw deltas. */
export interface LiveInferenceStream extends InferenceRouteInfo {
  frames: AsyncIterable<{ index: number; frame: LiveDeltaFrame }>;
  result: Promise<InferenceResult>;
  continued: boolean;
  /** A `reset` frame went on the stream before the deltas (`restartFrom`, not continued). */
  reset: boolean;
  /** The buffer index of the last frame appended (once `frames` ended; unindexed tees included); 0 when none was. */
  lastIndex(): number;
}

export const toUsageResponse = (u: NormalizedUsage) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cached_input_tokens: u.cachedInputTokens,
});

/**
 * InferenceService — the one way to call a model (docs/design.md §11.1): /v1, chat sessions, agent chat and the agent loop
 * all come here. No Fastify, no /v1 validation: code passes a typed InferenceRequest, the /v1 edges pass the
 * PreparedRequest their validator built.
 *
 *   const r = await inference.complete({ messages, model, tools }, { tenantId, origin, signal, costCapMicros });
 *   r.provider / model / route_reason / attempts / failover; r.text, r.content_blocks, r.tool_calls, r.stop_reason,
 *   r.usage, r.cost_micros_usd
 *
 *   const s = await inference.stream(request, ctx);            // resolves after the upstream's first byte
 *   for await (const d of s.deltas) { ... }                    // InferenceDelta: text_delta, thinking_delta, tool_call_*, …
 *   const final = await s.result;
 *
 *   const live = await inference.streamLive(request, ctx, { streamId });   // deltas teed into LiveStreamBuffer
 *   for await (const { index, frame } of live.frames) { ... }
 *
 * Routing, retries, failover, breaker, cost and bookkeeping are InferenceEngineService's (which the /v1 pass-through
 * relay drives directly); this service adds the typed requests, the cost cap, result assembly and the live tee. Errors are
 * DomainErrors (model_not_configured, route_impossible, budget_exceeded, upstream_* …). Aborting `signal` cancels the
 * upstream request; breaking out of `deltas` does too.
 */
@Injectable()
export class InferenceService {
  constructor(
    private readonly engine: InferenceEngineService,
    @Inject(LiveStreamBuffer) private readonly buffer: LiveStreamBuffer,
  ) {}

  // ---- typed API (code) ----------------------------------------------------------------------------------

  // async: a malformed request rejects the returned promise (never a synchronous throw at the caller).
  async complete(request: InferenceRequest, ctx: InferenceContext): Promise<InferenceResult> {
    return this.completePrepared(prepareInternal(request, false), ctx);
  }

  async stream(request: InferenceRequest, ctx: InferenceContext): Promise<InferenceStream> {
    return this.streamPrepared(prepareInternal(request, true), ctx);
  }

  /** stream(), with every forwarded delta appended to the live stream `tee.streamId` (a buffer outage does not stop the call). */
  async streamLive(request: InferenceRequest, ctx: InferenceContext, tee: LiveTee): Promise<LiveInferenceStream> {
    const s = await this.stream(request, ctx);
    const buffer = this.buffer;
    const failed = (err: unknown) => rootLogger().warn({ err: String(err), stream_id: tee.streamId }, 'live stream buffer append failed');
    let last = 0;
    const reset = tee.restartFrom !== undefined && !s.continued;
    // Before any delta of the new attempt: a reader applies it to what it showed, then gets the reply anew.
    if (reset) last = await buffer.append(tee.streamId, JSON.stringify(resetFrame(tee.restartFrom!))).catch((err: unknown) => (failed(err), 0));
    async function* frames(): AsyncGenerator<{ index: number; frame: LiveDeltaFrame }> {
      let index = 0;
      let appended: Promise<unknown> = Promise.resolve();
      try {
        for await (const d of s.deltas) {
          const frame = liveFrameOf(d);
          if (!frame) continue;
          if (tee.unindexed) {
            const append = buffer.append(tee.streamId, JSON.stringify(frame)).then((i) => (last = i), failed);
            appended = appended.then(() => append);
          } else {
            try {
              index = last = await buffer.append(tee.streamId, JSON.stringify(frame));
            } catch (err) {
              failed(err);
              index += 1;
            }
          }
          yield { index, frame };
        }
      } finally {
        await appended;
      }
    }
    const { deltas: _deltas, ...rest } = s;
    return { ...rest, frames: frames(), reset, lastIndex: () => last };
  }

  // ---- prepared API (the /v1 edges, after their own validation) ------------------------------------------

  async completePrepared(prepared: PreparedRequest, ctx: InferenceContext): Promise<InferenceResult> {
    const call = await this.engine.dispatchComplete({ ...prepared, stream: false }, this.engine.identity(ctx), ctx.signal, this.capOf(prepared, ctx));
    const n = call.upstreamProtocol === 'openai' ? normalizeOpenaiResponse(call.body.json) : normalizeAnthropicResponse(call.body.json);
    return {
      ...call.info,
      id: n.id,
      text: n.text,
      content_blocks: n.content_blocks,
      tool_calls: n.tool_calls,
      stop_reason: n.stop_reason,
      usage: toUsageResponse(call.usage),
      cost_micros_usd: call.costMicros,
      cost_usd: formatUsd(call.costMicros),
      protocol: call.upstreamProtocol,
      raw: call.body.json,
    };
  }

  async streamPrepared(prepared: PreparedRequest, ctx: InferenceContext): Promise<InferenceStream> {
    const open = await this.engine.dispatchStream({ ...prepared, stream: true }, this.engine.identity(ctx), ctx.signal, this.capOf(prepared, ctx));
    const acc = new StreamAccumulator();
    let resolve!: (r: InferenceResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<InferenceResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // The error also ends `deltas`; a consumer that stops reading never awaits `result`, whose rejection is then not unhandled.
    result.catch(() => undefined);
    const info = open.info;
    async function* deltas(): AsyncGenerator<InferenceDelta> {
      let error: UpstreamError | undefined;
      let aborted = true;
      try {
        for await (const d of decodeUpstreamStream(open, ctx.signal)) {
          acc.add(d);
          yield d;
        }
        aborted = false;
      } catch (err) {
        aborted = false;
        error = err instanceof UpstreamError ? err : transportError(open.selected.provider, err, ctx.signal);
        if (error.kind === 'aborted') aborted = true;
        throw error;
      } finally {
        if (aborted) open.upstream.body.destroy();
        const cost = open.finish({ usage: acc.usage, error: aborted ? undefined : error, clientAborted: aborted });
        const m = acc.message();
        if (error && !aborted) reject(error);
        else
          resolve({
            ...info,
            id: m.id,
            text: m.text,
            content_blocks: m.content_blocks,
            tool_calls: m.tool_calls,
            stop_reason: m.stop_reason,
            usage: toUsageResponse(acc.usage),
            cost_micros_usd: cost,
            cost_usd: formatUsd(cost),
            protocol: open.upstreamProtocol,
          });
      }
    }
    return { ...info, deltas: deltas(), result, continued: open.continued };
  }

  private capOf(prepared: PreparedRequest, ctx: InferenceContext): CostCap | undefined {
    if (ctx.costCapMicros === undefined) return undefined;
    return { micros: Math.max(0, ctx.costCapMicros), maxTokens: maxTokensOf(prepared) };
  }
}
