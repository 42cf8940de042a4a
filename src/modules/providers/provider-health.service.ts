import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';

export type CircuitState = 'closed' | 'open' | 'half_open';
export type HealthStatus = 'healthy' | 'degraded' | 'half_open' | 'open' | 'unknown';

interface Health {
  circuit: CircuitState;
  consecutiveFailures: number;
  openUntil: number;
  openReason: 'failures' | 'rate_limited' | undefined;
  probeInFlight: boolean;
  /** Exponentially decayed failure count (half-life 60 s): the stability penalty. */
  penalty: number;
  penaltyAt: number;
  latencyMs: number | undefined;
  successes: number;
  failures: number;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
  lastSuccessAt: number | undefined;
}

export type HealthSnapshot = Omit<Health, 'openUntil' | 'probeInFlight' | 'penaltyAt'> & { status: HealthStatus; openUntil: number | undefined };

export type Admission = { ok: true; probe: boolean } | { ok: false; reason: 'circuit_open' | 'provider_rate_limited' };

const HALF_LIFE_MS = 60_000;
const RANK: Record<HealthStatus, number> = { healthy: 0, unknown: 0, half_open: 1, degraded: 2, open: 3 };

/**
 * Passive provider health from live traffic (no background prober): a circuit breaker per provider
 * (N consecutive retryable failures, or one 429, open it for the cooldown; then one half-open probe),
 * a decayed failure penalty (stability) and a latency EWMA. In-process state, like the reference.
 */
@Injectable()
export class ProviderHealthService {
  private readonly byId = new Map<string, Health>();

  constructor(private readonly config: AppConfig) {}

  private get(id: string): Health {
    let h = this.byId.get(id);
    if (!h) {
      h = {
        circuit: 'closed',
        consecutiveFailures: 0,
        openUntil: 0,
        openReason: undefined,
        probeInFlight: false,
        penalty: 0,
        penaltyAt: 0,
        latencyMs: undefined,
        successes: 0,
        failures: 0,
        lastError: undefined,
        lastErrorAt: undefined,
        lastSuccessAt: undefined,
      };
      this.byId.set(id, h);
    }
    return h;
  }

  /** May a request be sent now? Moves open → half_open after the cooldown and admits one probe. */
  admit(id: string, now = Date.now()): Admission {
    const h = this.byId.get(id);
    if (!h || h.circuit === 'closed') return { ok: true, probe: false };
    if (h.circuit === 'open') {
      if (now < h.openUntil) return { ok: false, reason: h.openReason === 'rate_limited' ? 'provider_rate_limited' : 'circuit_open' };
      h.circuit = 'half_open';
    }
    if (h.probeInFlight) return { ok: false, reason: h.openReason === 'rate_limited' ? 'provider_rate_limited' : 'circuit_open' };
    h.probeInFlight = true;
    return { ok: true, probe: true };
  }

  /** Read-only view of admission, for ordering and readiness (does not take the probe slot). */
  wouldAdmit(id: string, now = Date.now()): Admission {
    const h = this.byId.get(id);
    if (!h || h.circuit === 'closed') return { ok: true, probe: false };
    if (h.circuit === 'open' && now < h.openUntil) return { ok: false, reason: h.openReason === 'rate_limited' ? 'provider_rate_limited' : 'circuit_open' };
    if (h.probeInFlight) return { ok: false, reason: h.openReason === 'rate_limited' ? 'provider_rate_limited' : 'circuit_open' };
    return { ok: true, probe: true };
  }

  recordSuccess(id: string, latencyMs: number, now = Date.now()): void {
    const h = this.get(id);
    h.circuit = 'closed';
    h.consecutiveFailures = 0;
    h.openReason = undefined;
    h.probeInFlight = false;
    h.successes++;
    h.lastSuccessAt = now;
    h.latencyMs = h.latencyMs === undefined ? latencyMs : h.latencyMs * 0.7 + latencyMs * 0.3;
  }

  /** Non-retryable failures (4xx: the request's fault) do not count against the provider. */
  recordFailure(id: string, failure: { retryable: boolean; rateLimited: boolean; message: string; retryAfterMs?: number }, now = Date.now()): void {
    const h = this.get(id);
    h.probeInFlight = false;
    h.lastError = failure.message;
    h.lastErrorAt = now;
    if (!failure.retryable) {
      if (h.circuit === 'half_open') h.circuit = 'closed';
      return;
    }
    h.failures++;
    h.penalty = this.decayedPenalty(h, now) + 1;
    h.penaltyAt = now;
    h.consecutiveFailures++;
    const cooldown = this.config.gateway.cooldownMs;
    if (failure.rateLimited) {
      this.open(h, 'rate_limited', now + Math.max(cooldown, failure.retryAfterMs ?? 0));
    } else if (h.circuit === 'half_open' || h.consecutiveFailures >= this.config.gateway.failureThreshold) {
      this.open(h, 'failures', now + cooldown);
    }
  }

  /** Releases a half-open probe slot that was admitted but never used (e.g. the client went away). */
  release(id: string): void {
    const h = this.byId.get(id);
    if (h) h.probeInFlight = false;
  }

  reset(id: string): void {
    this.byId.delete(id);
  }

  snapshot(id: string, now = Date.now()): HealthSnapshot {
    const h = this.byId.get(id);
    if (!h) {
      return {
        status: 'unknown',
        circuit: 'closed',
        openReason: undefined,
        openUntil: undefined,
        consecutiveFailures: 0,
        penalty: 0,
        latencyMs: undefined,
        successes: 0,
        failures: 0,
        lastError: undefined,
        lastErrorAt: undefined,
        lastSuccessAt: undefined,
      };
    }
    let circuit = h.circuit;
    if (circuit === 'open' && now >= h.openUntil) circuit = 'half_open';
    const degraded = this.config.gateway.latencyDegradedMs > 0 && h.latencyMs !== undefined && h.latencyMs > this.config.gateway.latencyDegradedMs;
    const status: HealthStatus =
      circuit === 'open' ? 'open' : circuit === 'half_open' ? 'half_open' : degraded ? 'degraded' : h.successes + h.failures === 0 ? 'unknown' : 'healthy';
    return {
      status,
      circuit,
      openReason: circuit === 'closed' ? undefined : h.openReason,
      openUntil: circuit === 'open' ? h.openUntil : undefined,
      consecutiveFailures: h.consecutiveFailures,
      penalty: this.decayedPenalty(h, now),
      latencyMs: h.latencyMs,
      successes: h.successes,
      failures: h.failures,
      lastError: h.lastError,
      lastErrorAt: h.lastErrorAt,
      lastSuccessAt: h.lastSuccessAt,
    };
  }

  /** Sort key: health rank, then stability (penalty, whole failures), then latency (10 ms buckets). */
  orderKey(id: string, now = Date.now()): [number, number, number] {
    const s = this.snapshot(id, now);
    return [RANK[s.status], Math.round(s.penalty), s.latencyMs === undefined ? 0 : Math.round(s.latencyMs / 10)];
  }

  private open(h: Health, reason: 'failures' | 'rate_limited', until: number): void {
    h.circuit = 'open';
    h.openReason = reason;
    h.openUntil = until;
  }

  private decayedPenalty(h: Health, now: number): number {
    if (h.penalty === 0) return 0;
    return h.penalty * Math.pow(0.5, (now - h.penaltyAt) / HALF_LIFE_MS);
  }
}
