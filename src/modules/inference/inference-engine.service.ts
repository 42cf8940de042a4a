import { Injectable } from '@nestjs/common';
import { sleep } from '@core/async/sleep';
import { AppConfig } from '@core/config/app-config';
import { newRequestId } from '@core/context/request-context';
import { BudgetGuard, type SpendHold } from '@modules/budgets';
import { continuesPrefill, ModelCapabilitiesService, PricingService, ProviderHealthService, transportError, UpstreamError } from '@modules/providers';
import type { CompletedCall, InferenceRouteInfo, InferenceContext, OpenStream } from './call-types';
import type { CancelSignal } from './client-abort';
import { BudgetExceededError, RouteImpossibleError, UnsendableRequestError, UpstreamFailedError } from './inference.errors';
import { anthropicUsage, isObject, type Json, NormalizedUsage, openaiUsage, ZERO_USAGE } from './protocol/normalized';
import { AttemptHandle, RequestRecorder, RequestRecorders } from './request-recorder';
import { RouteCandidate, RoutePlan } from './route-planner';
import { RoutePlanningService } from './route-planning.service';
import { callComplete, callStream, PreparedRequest } from './upstream-call';

export type CallIdentity = ReturnType<InferenceEngineService['identity']>;
/** Output tokens assumed for the cost cap and budget reservation of a request that sets no max_tokens. */
export const DEFAULT_WORST_CASE_OUTPUT_TOKENS = 4096;

/** The most a call may cost (micro-USD) and the output tokens its worst case is priced at. */
export type CostCap = { micros: number; maxTokens: number };

/**
 * The routing engine behind InferenceService: plans candidates (route reasons, health/stability/latency order),
 * tries them (retries on timeouts/5xx/429 with backoff, failover unless pinned, circuit breaker, the cost cap), prices
 * the call, and keeps the books (a usage ledger row per upstream call, the trace, GenAI spans). The /v1 pass-through
 * relay drives `dispatchStream` directly so the upstream's bytes go to the client untouched.
 */
@Injectable()
export class InferenceEngineService {
  constructor(
    private readonly config: AppConfig,
    private readonly planning: RoutePlanningService,
    private readonly health: ProviderHealthService,
    private readonly pricing: PricingService,
    private readonly recorders: RequestRecorders,
    private readonly capabilities: ModelCapabilitiesService,
    private readonly budgets: BudgetGuard,
  ) {}

  identity(ctx: Pick<InferenceContext, 'tenantId' | 'apiKeyId' | 'agentId' | 'origin' | 'endpoint'>) {
    return {
      tenantId: ctx.tenantId,
      apiKeyId: ctx.apiKeyId ?? ctx.origin?.apiKeyId,
      agentId: ctx.agentId,
      requestId: ctx.origin?.requestId ?? newRequestId(),
      traceId: ctx.origin?.traceId ?? '',
      endpoint: ctx.endpoint ?? 'router',
    };
  }

  /** What one attempt sends upstream: the request, the candidate's provider and model, timeouts, cancel, headers hook. */
  private upstreamArgs(req: PreparedRequest, c: RouteCandidate, signal: CancelSignal | undefined, handle: AttemptHandle) {
    return { req, provider: c.provider, model: c.model, timeouts: this.config.gateway.timeouts, signal, onHeaders: handle.headers };
  }

  /**
   * The request as this candidate gets it: a `continuation` becomes a trailing assistant message when the candidate's
   * model continues prefills (docs/takeover.md), else it is left out and the model answers anew.
   */
  private forCandidate(req: PreparedRequest, c: RouteCandidate): { req: PreparedRequest; continued: boolean } {
    if (!req.continuation) return { req, continued: false };
    const thinking = isObject(req.body.thinking)
      ? req.body.thinking.type !== 'disabled'
      : typeof req.body.reasoning_effort === 'string' && req.body.reasoning_effort !== 'none';
    if (!continuesPrefill(this.capabilities.effective(c.provider.id, c.model), c.provider.protocol, thinking)) return { req, continued: false };
    const messages = [...(req.body.messages as Json[]), { role: 'assistant', content: req.continuation }];
    return { req: { ...req, body: { ...req.body, messages } }, continued: true };
  }

  async dispatchComplete(req: PreparedRequest, id: CallIdentity, signal?: CancelSignal, cap?: CostCap): Promise<CompletedCall> {
    const rec = this.recorders.open(id, req);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      const out = await this.attemptLoop(plan, req, id, rec, signal, cap, async (c, handle, hold) => {
        const body = await callComplete(this.upstreamArgs(req, c, signal, handle));
        const raw = body.usage();
        const usage = (c.provider.protocol === 'openai' ? openaiUsage(raw) : fullAnthropicUsage(raw)) ?? { ...ZERO_USAGE };
        const costMicros = this.cost(c, usage);
        hold.settle(costMicros);
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
    const rec = this.recorders.open(id, req);
    try {
      const plan = await this.plan(req);
      rec.routed(plan);
      let attemptEnd: AttemptHandle['end'] | undefined;
      let spend: SpendHold | undefined;
      let continued = false;
      const out = await this.attemptLoop(plan, req, id, rec, signal, cap, async (c, handle, hold) => {
        const sent = this.forCandidate(req, c);
        const upstream = await callStream(this.upstreamArgs(sent.req, c, signal, handle));
        attemptEnd = handle.end;
        spend = hold;
        continued = sent.continued;
        return upstream;
      });
      const c = out.candidate;
      rec.firstChunk(c);
      let finished = false;
      return {
        info: this.info(id.requestId, plan, c, out.attempts),
        selected: c,
        upstreamProtocol: c.provider.protocol,
        upstream: out.value,
        continued,
        finish: ({ usage, error }) => {
          if (finished) return 0;
          finished = true;
          const costMicros = this.cost(c, usage);
          spend?.settle(costMicros);
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

  private info(requestId: string, plan: RoutePlan, c: RouteCandidate, attempts: { n: number; failover: boolean }): InferenceRouteInfo {
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

  /**
   * What a spend budget reserves for one attempt on this candidate: its output price for the request's max tokens
   * (DEFAULT_WORST_CASE_OUTPUT_TOKENS without one) plus its input price for the request's size (a byte of JSON per
   * token over-counts any tokenizer's; the settlement replaces it with the real cost).
   */
  private reservationMicros(c: RouteCandidate, req: PreparedRequest, cap: CostCap | undefined): number {
    const price = this.pricing.price(c.provider.id, c.provider.kind, c.model);
    const inputTokens = Math.ceil(Buffer.byteLength(JSON.stringify(req.responses ?? req.body)) / 3);
    return this.pricing.costMicros(price, { inputTokens, outputTokens: cap?.maxTokens ?? maxTokensOf(req), cachedInputTokens: 0 });
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
    req: PreparedRequest,
    id: CallIdentity,
    rec: RequestRecorder,
    signal: CancelSignal | undefined,
    cap: CostCap | undefined,
    fn: (c: RouteCandidate, handle: AttemptHandle, hold: SpendHold) => Promise<T>,
  ): Promise<{ value: T; candidate: RouteCandidate; attempts: { n: number; failover: boolean } }> {
    const { maxAttempts, retryBackoffMs } = this.config.gateway;
    let last: UpstreamError | undefined;
    let n = 0;
    let firstProvider: string | undefined;
    let lastCandidate: RouteCandidate | undefined;
    let overBudget: { provider: string; model: string; worst: number } | undefined;
    for (const c of plan.candidates) {
      const worst = cap ? this.worstCaseMicros(c, cap.maxTokens) : 0;
      if (cap && worst > cap.micros) {
        skip(plan, c, 'budget_denied');
        overBudget ??= { provider: c.provider.id, model: c.model, worst };
        if (plan.pinned) break;
        continue;
      }
      for (let a = 1; a <= maxAttempts; a++) {
        if (signal?.aborted) throw new UpstreamError('aborted', 'the client went away', { retryable: false });
        // Every attempt (a retry, a fallback at its own price) is let in by the spend budgets, or the call ends here (429).
        const hold = await this.budgets.admit(id, this.reservationMicros(c, req, cap));
        const admission = this.health.admit(c.provider.id);
        if (!admission.ok) {
          hold.settle(0);
          skip(plan, c, admission.reason);
          break;
        }
        n++;
        firstProvider ??= c.provider.id;
        const handle = rec.attempt(c, n, plan.reason);
        const t0 = performance.now();
        try {
          const value = await fn(c, handle, hold);
          this.health.recordSuccess(c.provider.id, performance.now() - t0);
          return { value, candidate: c, attempts: { n, failover: firstProvider !== c.provider.id } };
        } catch (err) {
          // Nothing billed: an attempt that failed before an answer (a stream's failures after its first byte settle in finish).
          hold.settle(0);
          const e = this.failedAttempt(c, handle, err, signal);
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

  /**
   * An attempt that threw: ends its record and tells the provider's health. A request that could not be sent, or a
   * client that went away, is thrown on at once (neither is the provider's fault); otherwise the classified error.
   */
  private failedAttempt(c: RouteCandidate, handle: AttemptHandle, err: unknown, signal: CancelSignal | undefined): UpstreamError {
    if (err instanceof UnsendableRequestError) {
      // Nothing reached the provider: the request is at fault, so the provider's health is untouched.
      handle.end({ ok: false, error: new UpstreamError('protocol', err.message, { retryable: false }) });
      this.health.release(c.provider.id);
      throw err;
    }
    const e = err instanceof UpstreamError ? err : transportError(c.provider, err, signal);
    handle.end({ ok: false, error: e });
    if (e.kind === 'aborted') {
      this.health.release(c.provider.id);
      throw e;
    }
    this.health.recordFailure(c.provider.id, { retryable: e.retryable, rateLimited: e.rateLimited, message: e.message, retryAfterMs: e.info.retryAfterMs });
    return e;
  }
}

/** Marks a candidate the loop passed over in the plan's `considered` list (once: a tried one keeps its outcome). */
function skip(plan: RoutePlan, c: RouteCandidate, reason: string): void {
  const entry = plan.considered.find((x) => x.provider === c.provider.id);
  if (entry && entry.status === 'not_tried') Object.assign(entry, { status: 'skipped', skip_reason: reason });
}

/** The output tokens a request asks for at most (any protocol's field), or DEFAULT_WORST_CASE_OUTPUT_TOKENS. */
export function maxTokensOf(req: Pick<PreparedRequest, 'body' | 'responses'>): number {
  for (const v of [req.body.max_tokens, req.body.max_completion_tokens, (req.responses as Json | undefined)?.max_output_tokens]) {
    if (typeof v === 'number' && v > 0) return v;
  }
  return DEFAULT_WORST_CASE_OUTPUT_TOKENS;
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
