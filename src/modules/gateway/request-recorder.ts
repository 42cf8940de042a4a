import { context, Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { UpstreamError } from '@modules/providers/upstream-error';
import type { UsageLedgerService } from '@modules/usage/usage-ledger.service';
import type { GatewayTrace, TraceAttempt, TraceStoreService } from '@modules/usage/trace-store.service';
import type { NormalizedUsage } from './protocol/normalized';
import type { PreparedRequest } from './upstream-call';
import type { RouteCandidate, RoutePlan } from './route-planner';

const tracer = trace.getTracer('hecate-gateway');

export interface CallIdentity {
  tenantId: string;
  apiKeyId?: string;
  requestId: string;
  traceId: string;
  endpoint: string;
}

/**
 * Per-request bookkeeping: the trace the inspector shows, one ledger row per upstream call, and OpenTelemetry
 * spans with GenAI semantic-convention attributes (no-ops unless the OTel SDK was started).
 */
export class RequestRecorder {
  readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  private routeMs = 0;
  private firstByteMs: number | undefined;
  private readonly span: Span;
  private readonly attempts: TraceAttempt[] = [];
  private readonly spans: GatewayTrace['spans'] = [];
  private plan: RoutePlan | undefined;
  private done = false;

  constructor(
    readonly id: CallIdentity,
    private readonly req: PreparedRequest,
    private readonly ledger: UsageLedgerService,
    private readonly traces: TraceStoreService,
  ) {
    this.span = tracer.startSpan(`chat ${req.model ?? ''}`.trim(), {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': req.model ?? '',
        'hecate.request_id': id.requestId,
        'hecate.endpoint': id.endpoint,
      },
    });
  }

  elapsed(): number {
    return performance.now() - this.t0;
  }

  routed(plan: RoutePlan): void {
    this.plan = plan;
    this.routeMs = this.elapsed();
  }

  /** Starts one upstream attempt; the returned function ends it. */
  attempt(c: RouteCandidate, n: number, routeReason: string): AttemptHandle {
    const start = this.elapsed();
    const startedAt = new Date().toISOString();
    const span = tracer.startSpan(
      `chat ${c.model}`,
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': c.provider.presetId ?? c.provider.id,
          'gen_ai.request.model': c.model,
          'hecate.provider': c.provider.id,
          'hecate.attempt': n,
        },
      },
      trace.setSpan(context.active(), this.span),
    );
    let headersAt: number | undefined;
    const finish = (outcome: { ok: true; usage?: NormalizedUsage; costMicros?: number; responseModel?: string } | { ok: false; error: UpstreamError }) => {
      const duration = this.elapsed() - start;
      const firstByte = headersAt === undefined ? undefined : headersAt - start;
      const rec: TraceAttempt = {
        provider: c.provider.id,
        model: c.model,
        attempt: n,
        status: outcome.ok ? 'ok' : 'error',
        started_at: startedAt,
        duration_ms: round(duration),
        ...(firstByte !== undefined ? { first_byte_ms: round(firstByte) } : {}),
      };
      if (!outcome.ok) {
        rec.error_type = outcome.error.kind === 'http' ? `http_${outcome.error.info.status}` : outcome.error.kind;
        rec.error = outcome.error.message;
        rec.retryable = outcome.error.retryable;
        if (outcome.error.info.status) rec.upstream_status = outcome.error.info.status;
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
        span.setAttribute('error.type', rec.error_type);
      } else if (outcome.usage) {
        span.setAttribute('gen_ai.usage.input_tokens', outcome.usage.inputTokens);
        span.setAttribute('gen_ai.usage.output_tokens', outcome.usage.outputTokens);
        span.setAttribute('gen_ai.response.model', outcome.responseModel || c.model);
      }
      span.end();
      this.attempts.push(rec);
      this.spans.push({
        name: `chat ${c.model}`,
        start_ms: round(start),
        duration_ms: round(duration),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': c.provider.presetId ?? c.provider.id,
          'gen_ai.request.model': c.model,
          ...(outcome.ok && outcome.usage
            ? { 'gen_ai.response.model': outcome.responseModel || c.model, 'gen_ai.usage.input_tokens': outcome.usage.inputTokens, 'gen_ai.usage.output_tokens': outcome.usage.outputTokens }
            : {}),
          ...(!outcome.ok ? { 'error.type': rec.error_type ?? 'error' } : {}),
          'hecate.provider': c.provider.id,
          'hecate.attempt': n,
        },
      });
      this.ledger.record({
        tenantId: this.id.tenantId,
        requestId: this.id.requestId,
        traceId: this.id.traceId,
        apiKeyId: this.id.apiKeyId,
        provider: c.provider.id,
        providerKind: c.provider.kind,
        model: c.model,
        routeReason,
        endpoint: this.id.endpoint,
        attempt: n,
        status: outcome.ok ? 'ok' : 'error',
        errorType: rec.error_type,
        stream: this.req.stream,
        inputTokens: outcome.ok ? (outcome.usage?.inputTokens ?? 0) : 0,
        outputTokens: outcome.ok ? (outcome.usage?.outputTokens ?? 0) : 0,
        cachedInputTokens: outcome.ok ? (outcome.usage?.cachedInputTokens ?? 0) : 0,
        costMicrosUsd: outcome.ok ? (outcome.costMicros ?? 0) : 0,
        latencyMs: duration,
        firstByteMs: firstByte,
      });
    };
    return {
      headers: () => {
        headersAt = this.elapsed();
        if (this.firstByteMs === undefined) this.firstByteMs = headersAt;
      },
      end: finish,
    };
  }

  /** Writes the trace once (success or failure). */
  finish(outcome: { ok: true; selected: RouteCandidate; usage: NormalizedUsage; costMicros: number } | { ok: false; errorType: string }): void {
    if (this.done) return;
    this.done = true;
    const total = this.elapsed();
    const plan = this.plan;
    const failed = new Set(this.attempts.filter((a) => a.status === 'error').map((a) => a.provider));
    const selected = outcome.ok ? outcome.selected.provider.id : undefined;
    const candidates = (plan?.considered ?? []).map((c) => {
      if (c.status === 'skipped') return c;
      if (c.provider === selected) return { ...c, status: 'selected' as const, reason: plan?.reason };
      if (failed.has(c.provider)) return { ...c, status: 'failed' as const };
      return c;
    });
    const firstTried = this.attempts[0]?.provider;
    const failover = selected !== undefined && firstTried !== undefined && firstTried !== selected;
    this.traces.record({
      request_id: this.id.requestId,
      trace_id: this.id.traceId,
      tenant_id: this.id.tenantId,
      endpoint: this.id.endpoint,
      inbound_protocol: this.req.protocol,
      stream: this.req.stream,
      started_at: new Date(this.startedAt).toISOString(),
      duration_ms: round(total),
      status: outcome.ok ? 'ok' : 'error',
      ...(!outcome.ok ? { error_type: outcome.errorType } : {}),
      route: {
        reason: plan?.reason,
        requested_model: this.req.model,
        requested_provider: this.req.provider,
        selected_provider: selected,
        selected_model: outcome.ok ? outcome.selected.model : undefined,
        failover,
        ...(failover ? { fallback_from: firstTried } : {}),
        candidates,
      },
      attempts: this.attempts,
      ...(outcome.ok
        ? {
            usage: { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens, cached_input_tokens: outcome.usage.cachedInputTokens },
            cost_micros_usd: outcome.costMicros,
          }
        : {}),
      timings: { route_ms: round(this.routeMs), ...(this.firstByteMs !== undefined ? { first_byte_ms: round(this.firstByteMs) } : {}), total_ms: round(total) },
      spans: [
        {
          name: 'gateway.request',
          start_ms: 0,
          duration_ms: round(total),
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': this.req.model ?? '',
            ...(outcome.ok ? { 'gen_ai.system': outcome.selected.provider.presetId ?? outcome.selected.provider.id, 'gen_ai.response.model': outcome.selected.model } : {}),
            ...(outcome.ok ? { 'gen_ai.usage.input_tokens': outcome.usage.inputTokens, 'gen_ai.usage.output_tokens': outcome.usage.outputTokens } : {}),
            'hecate.route_reason': plan?.reason ?? '',
          },
        },
        ...this.spans,
      ],
    });
    if (outcome.ok) {
      this.span.setAttributes({
        'gen_ai.system': outcome.selected.provider.presetId ?? outcome.selected.provider.id,
        'gen_ai.response.model': outcome.selected.model,
        'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
        'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
        'hecate.route_reason': plan?.reason ?? '',
      });
    } else {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorType });
      this.span.setAttribute('error.type', outcome.errorType);
    }
    this.span.end();
  }
}

export interface AttemptHandle {
  headers(): void;
  end(outcome: { ok: true; usage?: NormalizedUsage; costMicros?: number; responseModel?: string } | { ok: false; error: UpstreamError }): void;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
