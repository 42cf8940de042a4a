import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { busChannels, busRequest, EventBus, type Unsubscribe } from '@core/bus';
import { ignoreFailure } from '@core/logging/ignore-failure';

export type { GatewayTrace, TraceAttempt, TraceCandidate, TraceSpan } from '@contracts/traces';
import type { GatewayTrace } from '@contracts/traces';

export interface TraceEntry {
  requestId: string;
  tenantId: string;
  build(): GatewayTrace;
}

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
    this.unsubscribe = await this.bus.listen(busChannels.gatewayTraceLookup, (m) => {
      if (!m?.requestId || !m.replyTo || m.origin === this.origin) return;
      const found = this.local(m.requestId, m.tenantId ?? null);
      if (found.length > 0)
        void this.bus
          .publish(m.replyTo, { traces: found })
          .catch(ignoreFailure('answering a peer trace lookup', 'the asker waits a bounded time; an answer lost reads as a trace not found'));
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
    const reply = busChannels.gatewayTraceReply.of(randomUUID());
    try {
      const [first] = await busRequest(this.bus, {
        reply,
        send: () => this.bus.send(busChannels.gatewayTraceLookup, { requestId, tenantId, replyTo: reply.name, origin: this.origin }),
        timeoutMs: PEER_WAIT_MS,
      });
      return first?.traces ?? [];
    } catch {
      return [];
    }
  }
}
