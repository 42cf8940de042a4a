/**
 * GatewayRouterService — the one way to call an LLM through Hecate's routing (also what /v1 uses).
 *
 *   const result = await router.complete(
 *     { protocol: 'openai', body: { model: 'gpt-4o-mini', messages, tools } },   // or protocol 'anthropic' + a Messages body
 *     { tenantId, signal },                                                      // optional: requestId, apiKeyId
 *   );
 *   result.provider / model / route_reason / attempts / failover
 *   result.text, result.content_blocks (Anthropic-style, thinking kept with its signature), result.tool_calls (OpenAI-style)
 *   result.stop_reason ('end_turn' | 'max_tokens' | 'tool_use' | ...), result.usage, result.cost_micros_usd, result.raw
 *
 *   const s = await router.stream(request, { tenantId, signal });   // resolves after the upstream's first byte
 *   s.provider / s.model / s.route_reason / s.attempts               // known before any delta
 *   for await (const d of s.deltas) { ... }                          // GatewayDelta: text_delta, thinking_delta,
 *                                                                    // tool_call_start/delta, usage, stop, error
 *   const final = await s.result;                                    // same shape as complete(), assembled from deltas
 *
 * Routing (route reasons, health/stability/latency order, retries on timeouts/5xx/429, failover unless pinned,
 * circuit breaker) and bookkeeping (usage ledger row per upstream call, trace, GenAI spans) happen here.
 * Errors are DomainErrors (model_not_configured, route_impossible, upstream_* …). Aborting `signal` cancels the
 * upstream request; breaking out of `deltas` does too.
 */
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { newRequestId } from '@core/context/request-context';
import { PricingService } from '@modules/providers/pricing.service';
import { ProviderHealthService } from '@modules/providers/provider-health.service';
import { transportError, UpstreamError } from '@modules/providers/upstream-error';
import { TraceStoreService } from '@modules/usage/trace-store.service';
import { UsageLedgerService } from '@modules/usage/usage-ledger.service';
import { CancelSignal, onAbort } from './client-abort';
import { RouteImpossibleError, UpstreamFailedError } from './gateway.errors';
import { prepareRequest } from './ingress-validation';
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
import { RouteCandidate, RoutePlan, RouteReason } from './route-planner';
import { RoutePlanningService } from './route-planning.service';
import { callComplete, callStream, PreparedRequest, UpstreamBody, UpstreamStream } from './upstream-call';

export interface GatewayRequest {
  /** Shape of `body`: OpenAI Chat Completions or Anthropic Messages. `model`, `provider`, `stream` are read from it. */
  protocol: WireProtocol;
  body: Json;
}

export interface GatewayCallContext {
  tenantId: string;
  apiKeyId?: string;
  requestId?: string;
  traceId?: string;
  signal?: AbortSignal;
  /** For the ledger; defaults to `router`. */
  endpoint?: string;
}

export interface GatewayRouteInfo {
  request_id: string;
  provider: string;
  provider_kind: 'cloud' | 'local';
  model: string;
  route_reason: RouteReason;
  attempts: number;
  failover: boolean;
}

export interface GatewayResult extends GatewayRouteInfo {
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

export interface GatewayStream extends GatewayRouteInfo {
  deltas: AsyncIterable<GatewayDelta>;
  result: Promise<GatewayResult>;
}

/** A finished non-streaming call, before rendering (the ingress passes `text` through when protocols match). */
export interface CompletedCall {
  info: GatewayRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  body: UpstreamBody;
  usage: NormalizedUsage;
  costMicros: number;
}

/** A committed stream (first byte received). The consumer must call `finish` exactly once. */
export interface OpenStream {
  info: GatewayRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  upstream: UpstreamStream;
  /** Records usage/cost/health/trace; `error` for a stream that broke after commit. */
  finish(outcome: { usage: NormalizedUsage; error?: UpstreamError; clientAborted?: boolean }): number;
}

const sleep = (ms: number, signal?: CancelSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    onAbort(signal, () => {
      clearTimeout(t);
      resolve();
    });
  });

export const toUsageResponse = (u: NormalizedUsage) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cached_input_tokens: u.cachedInputTokens,
});
export const formatUsd = (micros: number): string => (micros / 1e6).toFixed(6);

@Injectable()
export class GatewayRouterService {
  constructor(
    private readonly config: AppConfig,
    private readonly planning: RoutePlanningService,
    private readonly health: ProviderHealthService,
    private readonly pricing: PricingService,
    private readonly ledger: UsageLedgerService,
    private readonly traces: TraceStoreService,
  ) {}

  // ---- public API (chat sessions and other modules) ------------------------------------------------------

  async complete(request: GatewayRequest, ctx: GatewayCallContext): Promise<GatewayResult> {
    const prepared = prepareRequest(request.protocol, request.body, {});
    const call = await this.dispatchComplete({ ...prepared, stream: false }, this.identity(ctx), ctx.signal);
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

  async stream(request: GatewayRequest, ctx: GatewayCallContext): Promise<GatewayStream> {
    const prepared = prepareRequest(request.protocol, request.body, {});
    const open = await this.dispatchStream({ ...prepared, stream: true }, this.identity(ctx), ctx.signal);
    const acc = new StreamAccumulator();
    let resolve!: (r: GatewayResult) => void;
    let reject!: (e: unknown) => void;
    const result = new Promise<GatewayResult>((res, rej) => {
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

  // ---- engine (used by the /v1 ingress) ------------------------------------------------------------------

  identity(ctx: Partial<GatewayCallContext> & { tenantId: string }) {
    return {
      tenantId: ctx.tenantId,
      apiKeyId: ctx.apiKeyId,
      requestId: ctx.requestId ?? newRequestId(),
      traceId: ctx.traceId ?? '',
      endpoint: ctx.endpoint ?? 'router',
    };
  }

  async dispatchComplete(req: PreparedRequest, id: ReturnType<GatewayRouterService['identity']>, signal?: CancelSignal): Promise<CompletedCall> {
    const rec = new RequestRecorder(id, req, this.ledger, this.traces);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      const out = await this.attemptLoop(plan, rec, signal, async (c, handle) => {
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

  async dispatchStream(req: PreparedRequest, id: ReturnType<GatewayRouterService['identity']>, signal?: CancelSignal): Promise<OpenStream> {
    const rec = new RequestRecorder(id, req, this.ledger, this.traces);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      let attemptEnd: AttemptHandle['end'] | undefined;
      const out = await this.attemptLoop(plan, rec, signal, async (c, handle) => {
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
    fn: (c: RouteCandidate, handle: AttemptHandle) => Promise<T>,
  ): Promise<{ value: T; candidate: RouteCandidate; attempts: { n: number; failover: boolean } }> {
    const { maxAttempts, retryBackoffMs } = this.config.gateway;
    let last: UpstreamError | undefined;
    let n = 0;
    let firstProvider: string | undefined;
    let lastCandidate: RouteCandidate | undefined;
    for (const c of plan.candidates) {
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
