import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { newRequestId, type RequestOrigin } from '@core/context/request-context';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { sleep } from '@core/async/sleep';
import { rootLogger } from '@core/logging/logger';
import { formatUsd } from '@core/money';
import { PricingService } from '@modules/providers';
import { ProviderHealthService } from '@modules/providers';
import { transportError, UpstreamError } from '@modules/providers';
import { TraceStoreService } from './usage/trace-store.service';
import { UsageLedgerService } from './usage/usage-ledger.service';
import { CancelSignal } from './client-abort';
import { BudgetExceededError, RouteImpossibleError, UpstreamFailedError } from './inference.errors';
import { type InferenceRequest, prepareInternal } from './inference-request';
import { liveFrameOf, type LiveDeltaFrame } from './live-frames';
import {
  anthropicUsage,
  ContentBlock,
  GatewayDelta,
  Json,
  NormalizedUsage,
  openaiUsage,
  StopReason,
  ToolCall,
  WireProtocol,
  ZERO_USAGE,
} from './protocol/normalized';
import { normalizeAnthropicResponse, normalizeOpenaiResponse } from './protocol/response-translation';
import { decodeUpstreamStream, StreamAccumulator } from './stream-pipeline';
import { AttemptHandle, RequestRecorder } from './request-recorder';
import { RouteCandidate, RoutePlan } from './route-planner';
import { RoutePlanningService } from './route-planning.service';
import type { CompletedCall, GatewayRouteInfo, OpenStream } from './call-types';
import { callComplete, callStream, PreparedRequest } from './upstream-call';

/** Who a call is for and how it is bounded. */
export interface InferenceContext {
  tenantId: string;
  apiKeyId?: string;
  /** The request (or job) the call serves: its ids go on the usage row and the trace. */
  origin?: RequestOrigin | null;
  signal?: AbortSignal;
  /** For the ledger (e.g. `/hecate/v1/chat/sessions/send`); defaults to `router`. */
  endpoint?: string;
  /**
   * Budget hook: the most this call may cost, in micro-USD. A candidate whose worst case (its output price × the
   * request's max_tokens, or DEFAULT_WORST_CASE_OUTPUT_TOKENS without one) exceeds it is skipped (`budget_denied`);
   * none left → BudgetExceededError before any upstream request.
   */
  costCapMicros?: number;
}

/** Tee of a stream's deltas into LiveStreamBuffer: each frame gets the buffer's index (the SSE id of live streams). */
export interface LiveTee {
  streamId: string;
}

export interface InferenceResult extends GatewayRouteInfo {
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

export interface InferenceStream extends GatewayRouteInfo {
  deltas: AsyncIterable<GatewayDelta>;
  /** The assembled result (after the deltas end; after an abort, the partial reply). */
  result: Promise<InferenceResult>;
}

/** A stream teed into LiveStreamBuffer: frames with their buffer index instead of raw deltas. */
export interface LiveInferenceStream extends GatewayRouteInfo {
  frames: AsyncIterable<{ index: number; frame: LiveDeltaFrame }>;
  result: Promise<InferenceResult>;
}

/** Output tokens assumed for the budget check of a request that sets no max_tokens. */
export const DEFAULT_WORST_CASE_OUTPUT_TOKENS = 4096;

export const toUsageResponse = (u: NormalizedUsage) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cached_input_tokens: u.cachedInputTokens,
});

type CallIdentity = ReturnType<InferenceService['identity']>;
type CostCap = { micros: number; maxTokens: number } | undefined;

/**
 * InferenceService — the one way to call a model (DESIGN §11.1): /v1, chat sessions, agent chat and the agent loop
 * all come here. No Fastify, no /v1 validation: code passes a typed InferenceRequest, the /v1 edges pass the
 * PreparedRequest their validator built.
 *
 *   const r = await inference.complete({ messages, model, tools }, { tenantId, origin, signal, costCapMicros });
 *   r.provider / model / route_reason / attempts / failover; r.text, r.content_blocks, r.tool_calls, r.stop_reason,
 *   r.usage, r.cost_micros_usd
 *
 *   const s = await inference.stream(request, ctx);            // resolves after the upstream's first byte
 *   for await (const d of s.deltas) { ... }                    // GatewayDelta: text_delta, thinking_delta, tool_call_*, …
 *   const final = await s.result;
 *
 *   const live = await inference.streamLive(request, ctx, { streamId });   // deltas teed into LiveStreamBuffer
 *   for await (const { index, frame } of live.frames) { ... }
 *
 * Routing (route reasons, health/stability/latency order, retries on timeouts/5xx/429, failover unless pinned,
 * circuit breaker), cost, the usage ledger row per upstream call, the trace and GenAI spans happen here. Errors are
 * DomainErrors (model_not_configured, route_impossible, budget_exceeded, upstream_* …). Aborting `signal` cancels the
 * upstream request; breaking out of `deltas` does too.
 */
@Injectable()
export class InferenceService {
  constructor(
    private readonly config: AppConfig,
    private readonly planning: RoutePlanningService,
    private readonly health: ProviderHealthService,
    private readonly pricing: PricingService,
    private readonly ledger: UsageLedgerService,
    private readonly traces: TraceStoreService,
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
    async function* frames(): AsyncGenerator<{ index: number; frame: LiveDeltaFrame }> {
      let index = 0;
      for await (const d of s.deltas) {
        const frame = liveFrameOf(d);
        if (!frame) continue;
        try {
          index = await buffer.append(tee.streamId, JSON.stringify(frame));
        } catch (err) {
          rootLogger().warn({ err: String(err), stream_id: tee.streamId }, 'live stream buffer append failed');
          index += 1;
        }
        yield { index, frame };
      }
    }
    const { deltas: _deltas, ...rest } = s;
    return { ...rest, frames: frames() };
  }

  // ---- prepared API (the /v1 edges, after their own validation) ------------------------------------------

  async completePrepared(prepared: PreparedRequest, ctx: InferenceContext): Promise<InferenceResult> {
    const call = await this.dispatchComplete({ ...prepared, stream: false }, this.identity(ctx), ctx.signal, this.capOf(prepared, ctx));
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
    const open = await this.dispatchStream({ ...prepared, stream: true }, this.identity(ctx), ctx.signal, this.capOf(prepared, ctx));
    const acc = new StreamAccumulator();
    let resolve!: (r: InferenceResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<InferenceResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    result.catch(() => undefined);
    const info = open.info;
    async function* deltas(): AsyncGenerator<GatewayDelta> {
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
    return { ...info, deltas: deltas(), result };
  }

  private capOf(prepared: PreparedRequest, ctx: InferenceContext): CostCap {
    if (ctx.costCapMicros === undefined) return undefined;
    const b = prepared.body;
    const requested = typeof b.max_tokens === 'number' ? b.max_tokens : typeof b.max_completion_tokens === 'number' ? b.max_completion_tokens : undefined;
    return { micros: Math.max(0, ctx.costCapMicros), maxTokens: requested ?? DEFAULT_WORST_CASE_OUTPUT_TOKENS };
  }

  // ---- engine (used by the /v1 ingress) ------------------------------------------------------------------

  identity(ctx: Pick<InferenceContext, 'tenantId' | 'apiKeyId' | 'origin' | 'endpoint'>) {
    return {
      tenantId: ctx.tenantId,
      apiKeyId: ctx.apiKeyId,
      requestId: ctx.origin?.requestId ?? newRequestId(),
      traceId: ctx.origin?.traceId ?? '',
      endpoint: ctx.endpoint ?? 'router',
    };
  }

  async dispatchComplete(req: PreparedRequest, id: CallIdentity, signal?: CancelSignal, cap?: CostCap): Promise<CompletedCall> {
    const rec = new RequestRecorder(id, req, this.ledger, this.traces);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      const out = await this.attemptLoop(plan, rec, signal, cap, async (c, handle) => {
        const body = await callComplete({
          req,
          provider: c.provider,
          model: c.model,
          timeouts: this.config.gateway.timeouts,
          signal,
          onHeaders: handle.headers,
        });
        const raw = body.usage();
        const usage = (c.provider.protocol === 'openai' ? openaiUsage(raw) : fullAnthropicUsage(raw)) ?? { ...ZERO_USAGE };
        const costMicros = this.cost(c, usage);
        handle.end({ ok: true, usage, costMicros });
        return { body, usage, costMicros };
      });
      rec.finish({ ok: true, selected: out.candidate, usage: out.value.usage, costMicros: out.value.costMicros });
      return {
        info: this.info(id.requestId, plan, out.candidate, out.attempts),
        selected: out.candidate,
        upstreamProtocol: out.candidate.provider.protocol,
        ...out.value,
      };
    } catch (err) {
      rec.finish({ ok: false, errorType: errorTypeOf(err) });
      throw err;
    }
  }

  async dispatchStream(req: PreparedRequest, id: CallIdentity, signal?: CancelSignal, cap?: CostCap): Promise<OpenStream> {
    const rec = new RequestRecorder(id, req, this.ledger, this.traces);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      let attemptEnd: AttemptHandle['end'] | undefined;
      const out = await this.attemptLoop(plan, rec, signal, cap, async (c, handle) => {
        const upstream = await callStream({
          req,
          provider: c.provider,
          model: c.model,
          timeouts: this.config.gateway.timeouts,
          signal,
          onHeaders: handle.headers,
        });
        attemptEnd = handle.end;
        return upstream;
      });
      const c = out.candidate;
      let finished = false;
      return {
        info: this.info(id.requestId, plan, c, out.attempts),
        selected: c,
        upstreamProtocol: c.provider.protocol,
        upstream: out.value,
        finish: ({ usage, error }) => {
          if (finished) return 0;
          finished = true;
          const costMicros = this.cost(c, usage);
          if (error) {
            this.health.recordFailure(c.provider.id, { retryable: error.retryable, rateLimited: false, message: error.message });
            attemptEnd?.({ ok: false, error });
            rec.finish({ ok: false, errorType: error.kind });
          } else {
            attemptEnd?.({ ok: true, usage, costMicros });
            rec.finish({ ok: true, selected: c, usage, costMicros });
          }
          return costMicros;
        },
      };
    } catch (err) {
      rec.finish({ ok: false, errorType: errorTypeOf(err) });
      throw err;
    }
  }

  private info(requestId: string, plan: RoutePlan, c: RouteCandidate, attempts: { n: number; failover: boolean }): GatewayRouteInfo {
    return {
      request_id: requestId,
      provider: c.provider.id,
      provider_kind: c.provider.kind,
      model: c.model,
      route_reason: plan.reason,
      attempts: attempts.n,
      failover: attempts.failover,
    };
  }

  /** The most a call can cost on this candidate: its output price for maxTokens (input is already spent context). */
  private worstCaseMicros(c: RouteCandidate, maxTokens: number): number {
    return this.pricing.costMicros(this.pricing.price(c.provider.id, c.provider.kind, c.model), {
      inputTokens: 0,
      outputTokens: maxTokens,
      cachedInputTokens: 0,
    });
  }

  cost(c: RouteCandidate, usage: NormalizedUsage): number {
    return this.pricing.costMicros(this.pricing.price(c.provider.id, c.provider.kind, c.model), usage);
  }

  private plan(req: PreparedRequest): Promise<RoutePlan> {
    return this.planning.plan({ provider: req.provider, model: req.model, needsTools: req.needsTools, needsImages: req.needsImages });
  }

  /**
   * Tries candidates in order: up to GATEWAY_PROVIDER_MAX_ATTEMPTS per candidate with linear backoff, retrying
   * only retryable failures; a 429 or an opened circuit moves on to the next candidate at once; a
   * non-retryable upstream answer (4xx) is returned to the client as is.
   */
  private async attemptLoop<T>(
    plan: RoutePlan,
    rec: RequestRecorder,
    signal: CancelSignal | undefined,
    cap: CostCap,
    fn: (c: RouteCandidate, handle: AttemptHandle) => Promise<T>,
  ): Promise<{ value: T; candidate: RouteCandidate; attempts: { n: number; failover: boolean } }> {
    const { maxAttempts, retryBackoffMs } = this.config.gateway;
    let last: UpstreamError | undefined;
    let n = 0;
    let firstProvider: string | undefined;
    let lastCandidate: RouteCandidate | undefined;
    let overBudget: { provider: string; model: string; worst: number } | undefined;
    for (const c of plan.candidates) {
      if (cap) {
        const worst = this.worstCaseMicros(c, cap.maxTokens);
        if (worst > cap.micros) {
          const entry = plan.considered.find((x) => x.provider === c.provider.id);
          if (entry && entry.status === 'not_tried') Object.assign(entry, { status: 'skipped', skip_reason: 'budget_denied' });
          overBudget ??= { provider: c.provider.id, model: c.model, worst };
          if (plan.pinned) break;
          continue;
        }
      }
      for (let a = 1; a <= maxAttempts; a++) {
        if (signal?.aborted) throw new UpstreamError('aborted', 'the client went away', { retryable: false });
        const admission = this.health.admit(c.provider.id);
        if (!admission.ok) {
          const entry = plan.considered.find((x) => x.provider === c.provider.id);
          if (entry && entry.status === 'not_tried') Object.assign(entry, { status: 'skipped', skip_reason: admission.reason });
          break;
        }
        n++;
        firstProvider ??= c.provider.id;
        const handle = rec.attempt(c, n, plan.reason);
        const t0 = performance.now();
        try {
          const value = await fn(c, handle);
          this.health.recordSuccess(c.provider.id, performance.now() - t0);
          return { value, candidate: c, attempts: { n, failover: firstProvider !== c.provider.id } };
        } catch (err) {
          const e = err instanceof UpstreamError ? err : transportError(c.provider, err, signal);
          handle.end({ ok: false, error: e });
          if (e.kind === 'aborted') {
            this.health.release(c.provider.id);
            throw e;
          }
          this.health.recordFailure(c.provider.id, {
            retryable: e.retryable,
            rateLimited: e.rateLimited,
            message: e.message,
            retryAfterMs: e.info.retryAfterMs,
          });
          last = e;
          lastCandidate = c;
          if (!e.retryable) {
            if (e.kind === 'url_blocked') break;
            throw new UpstreamFailedError(e, { provider: c.provider.id, model: c.model, attempts: n });
          }
          if (e.rateLimited) break;
          if (a < maxAttempts) {
            if (!this.health.wouldAdmit(c.provider.id).ok) break;
            await sleep(retryBackoffMs * a, signal);
          }
        }
      }
      if (plan.pinned) break;
    }
    if (!last && overBudget && cap) {
      throw new BudgetExceededError({
        cost_cap_micros_usd: cap.micros,
        worst_case_micros_usd: overBudget.worst,
        provider: overBudget.provider,
        model: overBudget.model,
      });
    }
    if (!last) throw new RouteImpossibleError('every candidate provider became unavailable', plan.considered);
    throw new UpstreamFailedError(last, { provider: lastCandidate?.provider.id, model: lastCandidate?.model, attempts: n });
  }
}

function fullAnthropicUsage(u: unknown): NormalizedUsage | undefined {
  const p = anthropicUsage(u);
  return p ? { inputTokens: p.inputTokens ?? 0, outputTokens: p.outputTokens ?? 0, cachedInputTokens: p.cachedInputTokens ?? 0 } : undefined;
}

function errorTypeOf(err: unknown): string {
  if (err instanceof UpstreamError) return err.kind;
  const t = (err as { type?: unknown })?.type;
  return typeof t === 'string' ? t : 'gateway_error';
}
