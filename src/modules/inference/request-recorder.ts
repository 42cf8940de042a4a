import { Injectable } from '@nestjs/common';
import { context, Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { MetricsService } from '@core/metrics/metrics.service';
import type { UpstreamError } from '@modules/providers';
import { UsageLedgerService } from './usage/usage-ledger.service';
import { type GatewayTrace, type TraceAttempt, TraceStoreService } from './usage/trace-store.service';
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

type AttemptOutcome = { ok: true; usage?: NormalizedUsage; costMicros?: number; responseModel?: string } | { ok: false; error: UpstreamError };

interface AttemptRecord {
  candidate: RouteCandidate;
  n: number;
  startMs: number;
  durationMs: number;
  firstByteMs: number | undefined;
  outcome: AttemptOutcome;
}

export interface AttemptHandle {
  headers(): void;
  end(outcome: AttemptOutcome): void;
}

type Finish = { ok: true; selected: RouteCandidate; usage: NormalizedUsage; costMicros: number } | { ok: false; errorType: string };

/** gen_ai.operation.name of every call the gateway makes. */
const OPERATION = 'chat';

const round = (ms: number): number => Math.round(ms * 100) / 100;
const system = (c: RouteCandidate): string => c.provider.presetId ?? c.provider.id;
const errorTypeOf = (e: UpstreamError): string => (e.kind === 'http' ? `http_${e.info.status}` : e.kind);

/**
 * Per-request bookkeeping: one ledger row per upstream call, the trace the inspector shows, OpenTelemetry spans with
 * GenAI semantic-convention attribute names (no-ops unless the OTel SDK runs) and the gateway's Prometheus metrics
 * (every model call passes here once). The hot path only keeps raw facts; the trace document is built when someone reads it.
 */
export class RequestRecorder {
  private readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  private routeMs = 0;
  private firstByteMs: number | undefined;
  private readonly span: Span;
  private readonly attempts: AttemptRecord[] = [];
  private plan: RoutePlan | undefined;
  private done = false;
  /** Only what the trace needs: the recorder outlives the request (lazy trace), the body must not. */
  private readonly req: Pick<PreparedRequest, 'protocol' | 'stream' | 'model' | 'provider'>;

  constructor(
    readonly id: CallIdentity,
    request: PreparedRequest,
    private readonly ledger: UsageLedgerService,
    private readonly traces: TraceStoreService,
    private readonly metrics: MetricsService,
  ) {
    this.req = { protocol: request.protocol, stream: request.stream, model: request.model, provider: request.provider };
    const req = this.req;
    this.span = tracer.startSpan('chat');
    if (this.span.isRecording()) {
      this.span.updateName(`chat ${req.model ?? ''}`.trim());
      this.span.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': req.model ?? '',
        'hecate.request_id': id.requestId,
        'hecate.endpoint': id.endpoint,
      });
    }
  }

  private elapsed(): number {
    return performance.now() - this.t0;
  }

  routed(plan: RoutePlan): void {
    this.plan = plan;
    this.routeMs = this.elapsed();
  }

  /** Starts one upstream attempt; `end` records it (ledger row, span). */
  attempt(c: RouteCandidate, n: number, routeReason: string): AttemptHandle {
    const startMs = this.elapsed();
    const span = tracer.startSpan('chat', undefined, trace.setSpan(context.active(), this.span));
    if (span.isRecording()) {
      span.updateName(`chat ${c.model}`);
      span.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': system(c),
        'gen_ai.request.model': c.model,
        'hecate.provider': c.provider.id,
        'hecate.attempt': n,
      });
    }
    let headersAt: number | undefined;
    return {
      headers: () => {
        headersAt = this.elapsed();
        this.firstByteMs ??= headersAt;
      },
      end: (outcome) => {
        const durationMs = this.elapsed() - startMs;
        const firstByteMs = headersAt === undefined ? undefined : headersAt - startMs;
        this.attempts.push({ candidate: c, n, startMs, durationMs, firstByteMs, outcome });
        if (span.isRecording()) {
          if (!outcome.ok) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
            span.setAttribute('error.type', errorTypeOf(outcome.error));
          } else if (outcome.usage) {
            span.setAttributes({
              'gen_ai.response.model': outcome.responseModel || c.model,
              'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
              'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
            });
          }
        }
        span.end();
        const usage = outcome.ok ? outcome.usage : undefined;
        this.metrics.modelAttempt(
          OPERATION,
          system(c),
          c.model,
          durationMs / 1000,
          outcome.ok ? '' : errorTypeOf(outcome.error),
          usage ? usage.inputTokens : -1,
          usage ? usage.outputTokens : -1,
        );
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
          errorType: outcome.ok ? undefined : errorTypeOf(outcome.error),
          stream: this.req.stream,
          inputTokens: usage?.inputTokens ?? 0,
          outputTokens: usage?.outputTokens ?? 0,
          cachedInputTokens: usage?.cachedInputTokens ?? 0,
          costMicrosUsd: outcome.ok ? (outcome.costMicros ?? 0) : 0,
          latencyMs: durationMs,
          firstByteMs,
        });
      },
    };
  }

  /** A streamed request's first chunk arrived from `c` (time to first token, from the request's arrival here). */
  firstChunk(c: RouteCandidate): void {
    this.metrics.modelFirstChunk(OPERATION, system(c), c.model, this.elapsed() / 1000);
  }

  /** Records the trace once (success or failure); the document itself is built on first read. */
  finish(outcome: Finish): void {
    if (this.done) return;
    this.done = true;
    const totalMs = this.elapsed();
    const last = outcome.ok ? outcome.selected : this.attempts[this.attempts.length - 1]?.candidate;
    this.metrics.modelRequest(
      this.id.endpoint,
      last?.provider.id ?? '',
      last?.model ?? '',
      outcome.ok ? 'ok' : 'error',
      outcome.ok ? outcome.costMicros / 1e6 : 0,
    );
    if (this.span.isRecording()) {
      if (outcome.ok) {
        this.span.setAttributes({
          'gen_ai.system': system(outcome.selected),
          'gen_ai.response.model': outcome.selected.model,
          'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
          'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
          'hecate.route_reason': this.plan?.reason ?? '',
        });
      } else {
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorType });
        this.span.setAttribute('error.type', outcome.errorType);
      }
    }
    this.span.end();
    this.traces.record({ requestId: this.id.requestId, tenantId: this.id.tenantId, build: () => this.document(outcome, totalMs) });
  }

  private document(outcome: Finish, totalMs: number): GatewayTrace {
    const plan = this.plan;
    const attempts = this.attempts.map((a) => this.traceAttempt(a));
    const failed = new Set(attempts.filter((a) => a.status === 'error').map((a) => a.provider));
    const selected = outcome.ok ? outcome.selected.provider.id : undefined;
    const candidates = (plan?.considered ?? []).map((c) => {
      if (c.status === 'skipped') return c;
      if (c.provider === selected) return { ...c, status: 'selected' as const, reason: plan?.reason };
      if (failed.has(c.provider)) return { ...c, status: 'failed' as const };
      return c;
    });
    const firstTried = attempts[0]?.provider;
    const failover = selected !== undefined && firstTried !== undefined && firstTried !== selected;
    const spans = this.spans(outcome, totalMs);
    return {
      request_id: this.id.requestId,
      trace_id: this.id.traceId,
      tenant_id: this.id.tenantId,
      endpoint: this.id.endpoint,
      inbound_protocol: this.req.protocol,
      stream: this.req.stream,
      started_at: new Date(this.startedAt).toISOString(),
      duration_ms: round(totalMs),
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
      attempts,
      ...(outcome.ok
        ? {
            usage: { input_tokens: outcome.usage.inputTokens, output_tokens: outcome.usage.outputTokens, cached_input_tokens: outcome.usage.cachedInputTokens },
            cost_micros_usd: outcome.costMicros,
          }
        : {}),
      timings: {
        route_ms: round(this.routeMs),
        ...(this.firstByteMs !== undefined ? { first_byte_ms: round(this.firstByteMs) } : {}),
        total_ms: round(totalMs),
      },
      spans,
    };
  }

  /** One upstream attempt as the trace document lists it. */
  private traceAttempt(a: AttemptRecord): TraceAttempt {
    const rec: TraceAttempt = {
      provider: a.candidate.provider.id,
      model: a.candidate.model,
      attempt: a.n,
      status: a.outcome.ok ? 'ok' : 'error',
      started_at: new Date(this.startedAt + a.startMs).toISOString(),
      duration_ms: round(a.durationMs),
      ...(a.firstByteMs !== undefined ? { first_byte_ms: round(a.firstByteMs) } : {}),
    };
    if (!a.outcome.ok) {
      rec.error_type = errorTypeOf(a.outcome.error);
      rec.error = a.outcome.error.message;
      rec.retryable = a.outcome.error.retryable;
      if (a.outcome.error.info.status) rec.upstream_status = a.outcome.error.info.status;
    }
    return rec;
  }

  /** The request's span and one span per attempt, with the GenAI semantic-convention attributes. */
  private spans(outcome: Finish, totalMs: number): GatewayTrace['spans'] {
    const plan = this.plan;
    return [
      {
        name: 'gateway.request',
        start_ms: 0,
        duration_ms: round(totalMs),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': this.req.model ?? '',
          ...(outcome.ok
            ? {
                'gen_ai.system': system(outcome.selected),
                'gen_ai.response.model': outcome.selected.model,
                'gen_ai.usage.input_tokens': outcome.usage.inputTokens,
                'gen_ai.usage.output_tokens': outcome.usage.outputTokens,
              }
            : { 'error.type': outcome.errorType }),
          'hecate.route_reason': plan?.reason ?? '',
        },
      },
      ...this.attempts.map((a) => ({
        name: `chat ${a.candidate.model}`,
        start_ms: round(a.startMs),
        duration_ms: round(a.durationMs),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': system(a.candidate),
          'gen_ai.request.model': a.candidate.model,
          ...(a.outcome.ok && a.outcome.usage
            ? {
                'gen_ai.response.model': a.outcome.responseModel || a.candidate.model,
                'gen_ai.usage.input_tokens': a.outcome.usage.inputTokens,
                'gen_ai.usage.output_tokens': a.outcome.usage.outputTokens,
              }
            : {}),
          ...(!a.outcome.ok ? { 'error.type': errorTypeOf(a.outcome.error) } : {}),
          'hecate.provider': a.candidate.provider.id,
          'hecate.attempt': a.n,
        },
      })),
    ];
  }
}

/** Opens each call's RequestRecorder on the books it writes: the usage ledger, the traces, the metrics. */
@Injectable()
export class RequestRecorders {
  constructor(
    private readonly ledger: UsageLedgerService,
    private readonly traces: TraceStoreService,
    private readonly metrics: MetricsService,
  ) {}

  open(id: CallIdentity, request: PreparedRequest): RequestRecorder {
    return new RequestRecorder(id, request, this.ledger, this.traces, this.metrics);
  }
}
