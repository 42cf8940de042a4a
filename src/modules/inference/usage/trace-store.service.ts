import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { EventBus, Unsubscribe } from '@core/bus/event-bus.port';

export interface TraceCandidate {
  provider: string;
  model: string;
  kind?: string;
  status: 'selected' | 'skipped' | 'failed' | 'not_tried';
  reason?: string;
  skip_reason?: string;
}

export interface TraceAttempt {
  provider: string;
  model: string;
  attempt: number;
  status: 'ok' | 'error';
  started_at: string;
  duration_ms: number;
  first_byte_ms?: number;
  upstream_status?: number;
  error_type?: string;
  error?: string;
  retryable?: boolean;
}

export interface TraceSpan {
  name: string;
  start_ms: number;
  duration_ms: number;
  attributes: Record<string, string | number | boolean>;
}

/** One gateway request as the trace inspector shows it (GET /hecate/v1/traces?request_id=). */
export interface GatewayTrace {
  request_id: string;
  trace_id: string;
  tenant_id: string;
  endpoint: string;
  inbound_protocol: string;
  stream: boolean;
  started_at: string;
  duration_ms: number;
  status: 'ok' | 'error';
  error_type?: string;
  route: {
    reason?: string;
    requested_model?: string;
    requested_provider?: string;
    selected_provider?: string;
    selected_model?: string;
    failover: boolean;
    fallback_from?: string;
    candidates: TraceCandidate[];
  };
  attempts: TraceAttempt[];
  usage?: { input_tokens: number; output_tokens: number; cached_input_tokens: number };
  cost_micros_usd?: number;
  timings: { route_ms: number; first_byte_ms?: number; total_ms: number };
  spans: TraceSpan[];
}

export interface TraceEntry {
  requestId: string;
  tenantId: string;
  build(): GatewayTrace;
}

const LOOKUP_CHANNEL = 'gateway.traces.lookup';
/** Traces are keyed by tenant and request id: a request id is the client's choice, so two tenants may pick the same. */
const keyOf = (tenantId: string, requestId: string): string => `${tenantId} ${requestId}`;
const PEER_WAIT_MS = 300;

/**
 * Recent request traces, in memory per process (bounded by GATEWAY_TRACES_MAX_COUNT and _MAX_AGE, like the
 * reference's in-process tracer). A lookup that misses locally asks the other api processes over the
 * EventBus, so a trace is found whichever pod served the request. Keyed by (tenant, request id): another tenant
 * reusing a request id neither overwrites nor sees the first tenant's trace.
 */
@Injectable()
export class TraceStoreService implements OnModuleInit, OnModuleDestroy {
  private readonly traces = new Map<string, { at: number; entry: TraceEntry; built?: GatewayTrace }>();
  private readonly origin = randomUUID();
  private unsubscribe: Unsubscribe | undefined;

  constructor(
    private readonly config: AppConfig,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.mode !== 'scaled') return;
    this.unsubscribe = await this.bus.subscribe(LOOKUP_CHANNEL, (_c, message) => {
      const m = message as { requestId?: string; tenantId?: string | null; replyTo?: string; origin?: string };
      if (!m.requestId || !m.replyTo || m.origin === this.origin) return;
      const found = this.local(m.requestId, m.tenantId ?? null);
      if (found.length > 0) void this.bus.publish(m.replyTo, { traces: found }).catch(() => undefined);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** Keeps a trace; its document is built on first read (the hot path only stores a closure). */
  record(entry: TraceEntry): void {
    const { maxCount } = this.config.gateway.traces;
    const key = keyOf(entry.tenantId, entry.requestId);
    this.traces.delete(key);
    this.traces.set(key, { at: Date.now(), entry });
    while (this.traces.size > maxCount) {
      const oldest = this.traces.keys().next().value as string;
      this.traces.delete(oldest);
    }
  }

  /** Traces with this request id visible to the tenant (null: operator sees all). */
  async find(requestId: string, tenantId: string | null): Promise<GatewayTrace[]> {
    let found = this.local(requestId, tenantId);
    if (found.length === 0 && this.config.mode === 'scaled') found = await this.askPeers(requestId, tenantId);
    return found.filter((t) => tenantId === null || t.tenant_id === tenantId);
  }

  recent(tenantId: string | null, limit: number): GatewayTrace[] {
    this.prune();
    const out: GatewayTrace[] = [];
    for (const item of [...this.traces.values()].reverse()) {
      if (tenantId === null || item.entry.tenantId === tenantId) out.push(this.built(item));
      if (out.length >= limit) break;
    }
    return out;
  }

  /** The tenant's trace with this request id; for the operator (null), every tenant's, newest first. */
  private local(requestId: string, tenantId: string | null): GatewayTrace[] {
    this.prune();
    if (tenantId !== null) {
      const hit = this.traces.get(keyOf(tenantId, requestId));
      return hit ? [this.built(hit)] : [];
    }
    const out: GatewayTrace[] = [];
    for (const item of this.traces.values()) if (item.entry.requestId === requestId) out.unshift(this.built(item));
    return out;
  }

  private built(item: { entry: TraceEntry; built?: GatewayTrace }): GatewayTrace {
    item.built ??= item.entry.build();
    return item.built;
  }

  private prune(): void {
    const cutoff = Date.now() - this.config.gateway.traces.maxAgeMs;
    for (const [id, entry] of this.traces) {
      if (entry.at >= cutoff) break;
      this.traces.delete(id);
    }
  }

  private async askPeers(requestId: string, tenantId: string | null): Promise<GatewayTrace[]> {
    const replyTo = `gateway.traces.reply.${randomUUID()}`;
    let resolve!: (t: GatewayTrace[]) => void;
    const answer = new Promise<GatewayTrace[]>((r) => (resolve = r));
    const unsubscribe = await this.bus.subscribe(replyTo, (_c, message) => resolve((message as { traces: GatewayTrace[] }).traces ?? []));
    try {
      await this.bus.publish(LOOKUP_CHANNEL, { requestId, tenantId, replyTo, origin: this.origin });
      const timeout = new Promise<GatewayTrace[]>((r) => setTimeout(() => r([]), PEER_WAIT_MS).unref());
      return await Promise.race([answer, timeout]);
    } catch {
      return [];
    } finally {
      await unsubscribe().catch(() => undefined);
    }
  }
}
