import type { AppConfig } from '@core/config/app-config';
import { ProviderHealthService } from './provider-health.service';

const config = { gateway: { failureThreshold: 3, cooldownMs: 30_000, latencyDegradedMs: 0 } } as unknown as AppConfig;
const fail = { retryable: true, rateLimited: false, message: 'HTTP 500' };

describe('ProviderHealthService (circuit breaker)', () => {
  let health: ProviderHealthService;
  beforeEach(() => (health = new ProviderHealthService(config)));

  it('opens after N consecutive retryable failures, then half-opens for one probe after the cooldown', () => {
    const t = 1_000_000;
    health.recordFailure('p', fail, t);
    health.recordFailure('p', fail, t);
    expect(health.admit('p', t).ok).toBe(true);
    health.recordFailure('p', fail, t);
    expect(health.admit('p', t + 1)).toEqual({ ok: false, reason: 'circuit_open' });
    expect(health.snapshot('p', t + 1).status).toBe('open');
    // Cooldown over: one probe is admitted, a concurrent one is not.
    expect(health.admit('p', t + 30_001)).toEqual({ ok: true, probe: true });
    expect(health.admit('p', t + 30_002).ok).toBe(false);
    health.recordSuccess('p', 12, t + 30_010);
    expect(health.snapshot('p', t + 30_011).status).toBe('healthy');
    expect(health.admit('p', t + 30_012)).toEqual({ ok: true, probe: false });
  });

  it('re-opens when the half-open probe fails', () => {
    const t = 5_000_000;
    for (let i = 0; i < 3; i++) health.recordFailure('p', fail, t);
    expect(health.admit('p', t + 30_001).ok).toBe(true);
    health.recordFailure('p', fail, t + 30_002);
    expect(health.admit('p', t + 30_003)).toEqual({ ok: false, reason: 'circuit_open' });
  });

  it('opens at once on a 429 and reports it as rate limited', () => {
    health.recordFailure('p', { ...fail, rateLimited: true }, 100);
    expect(health.admit('p', 101)).toEqual({ ok: false, reason: 'provider_rate_limited' });
    expect(health.snapshot('p', 101).openReason).toBe('rate_limited');
  });

  it('does not count non-retryable (4xx) failures against the provider', () => {
    for (let i = 0; i < 5; i++) health.recordFailure('p', { ...fail, retryable: false }, 100);
    expect(health.admit('p', 101).ok).toBe(true);
  });

  it('orders by health, then stability, then latency', () => {
    health.recordSuccess('fast', 10, 0);
    health.recordSuccess('slow', 400, 0);
    health.recordFailure('flaky', fail, 0);
    health.recordSuccess('flaky', 5, 0);
    const order = ['slow', 'flaky', 'fast'].sort((a, b) => {
      const ka = health.orderKey(a, 1);
      const kb = health.orderKey(b, 1);
      return ka[0] - kb[0] || ka[1] - kb[1] || ka[2] - kb[2];
    });
    expect(order).toEqual(['fast', 'slow', 'flaky']);
  });
});
