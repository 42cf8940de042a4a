import type { AppConfig } from '@core/config/app-config';
import { RedisConnections } from '@core/redis/redis-connections';
import { RateLimiterService } from '@modules/gateway/rate-limiter.service';
import { testRedisUrl, uniqueId } from '../../support/infra';

const config = (prefix: string) => ({ redis: { prefix }, gateway: { rateLimit: { enabled: true, rpm: 60, burst: 3 } } }) as unknown as AppConfig;

describe('gateway rate limiter', () => {
  describe('scaled: one Redis token bucket shared by every api process', () => {
    const connections: RedisConnections[] = [];
    afterAll(() => Promise.all(connections.map((c) => c.close())));

    it('spends one bucket from two processes and refuses the request past the burst', async () => {
      const prefix = uniqueId('rl');
      const limiters = [0, 1].map(() => {
        const redis = new RedisConnections(testRedisUrl());
        connections.push(redis);
        const limiter = new RateLimiterService(config(prefix), null, redis);
        limiter.onModuleInit();
        return limiter;
      });
      await Promise.all(connections.map((c) => c.waitReady()));
      const decisions = [];
      for (const i of [0, 1, 0, 1]) decisions.push(await limiters[i].take('hk_sharedkey01', 1));
      expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(decisions[3].limit).toBe(60);
      expect(decisions[3].retryAfterS).toBe(1);
      expect(decisions[3].reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      // Another key has its own bucket; a zero-cost peek never spends.
      expect((await limiters[1].take('hk_otherkey001', 1)).remaining).toBe(2);
      expect((await limiters[0].take('hk_otherkey001', 0)).remaining).toBe(2);
    });
  });

  describe('embedded: an in-process bucket', () => {
    it('refills at RPM/60 per second up to the burst', async () => {
      const limiter = new RateLimiterService(config('x'), null, null);
      limiter.onModuleInit();
      const results = [];
      for (let i = 0; i < 4; i++) results.push((await limiter.take('global', 1)).allowed);
      expect(results).toEqual([true, true, true, false]);
    });
  });
});
