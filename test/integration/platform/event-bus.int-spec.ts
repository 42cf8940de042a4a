import { Redis } from 'ioredis';
import { RedisEventBus } from '@core/bus/redis-event-bus.adapter';
import { RedisConnections } from '@core/redis/redis-connections';
import { startPrivateRedis, testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import { busAdapters, type BusHarness } from '../../support/bus-adapters';
import { PortPeer } from '../../support/port-peer';

describe.each(busAdapters)('EventBus behaviour (%s)', (_name, make) => {
  let h: BusHarness;
  beforeEach(async () => (h = await make()));
  afterEach(() => h.close());

  it('delivers to exact and pattern subscribers, not to others, in publish order', async () => {
    const exact: unknown[] = [];
    const pattern: string[] = [];
    const other: unknown[] = [];
    await h.bus.subscribe('runs.r1', (_c, m) => exact.push(m));
    await h.bus.subscribe('runs.*', (c) => pattern.push(c));
    await h.bus.subscribe('tasks.*', (_c, m) => other.push(m));
    for (let i = 0; i < 5; i++) await h.bus.publish('runs.r1', { i });
    await h.bus.publish('runs.r2', { i: 99 });
    await waitFor(() => exact.length === 5 && pattern.length === 6, { what: 'deliveries' });
    expect(exact).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }]);
    expect(pattern.filter((c) => c === 'runs.r2')).toHaveLength(1);
    expect(other).toEqual([]);
  });

  it('keeps a channel while another local subscriber still holds it (refcount)', async () => {
    const a: unknown[] = [];
    const b: unknown[] = [];
    const unsubA = await h.bus.subscribe('ch.x', (_c, m) => a.push(m));
    await h.bus.subscribe('ch.x', (_c, m) => b.push(m));
    await unsubA();
    await h.bus.publish('ch.x', 'after');
    await waitFor(() => b.length === 1, { what: 'delivery to the remaining subscriber' });
    expect(a).toEqual([]);
    expect(b).toEqual(['after']);
  });

  it('hands subscribers a copy, never the publisher object', async () => {
    const got: { n: number }[] = [];
    await h.bus.subscribe('copy', (_c, m) => got.push(m as { n: number }));
    const original = { n: 1 };
    await h.bus.publish('copy', original);
    await waitFor(() => got.length === 1);
    original.n = 2;
    expect(got[0]).toEqual({ n: 1 });
  });
});

describe('RedisEventBus across processes', () => {
  it('publishes from this process to another and back', async () => {
    const prefix = uniqueId('xb');
    const peer = await PortPeer.start(testRedisUrl(), prefix);
    const redis = new RedisConnections(testRedisUrl());
    const bus = new RedisEventBus(redis, `${prefix}:bus:`);
    try {
      await redis.waitReady();
      await peer.call('subscribe', { pattern: 'runs.*' });
      await bus.publish('runs.abc', { hello: 'peer' });
      await waitFor(() => peer.messages.length === 1, { what: 'peer delivery' });
      expect(peer.messages[0]).toEqual({ channel: 'runs.abc', message: { hello: 'peer' } });

      const here: unknown[] = [];
      await bus.subscribe('back', (_c, m) => here.push(m));
      await peer.call('publish', { channel: 'back', message: [1, 2, 3] });
      await waitFor(() => here.length === 1, { what: 'delivery from peer' });
      expect(here).toEqual([[1, 2, 3]]);
    } finally {
      await peer.stop();
      await bus.close();
      await redis.close();
    }
  });

  it('re-subscribes after CLIENT KILL TYPE pubsub and after a Redis restart, and tells listeners', async () => {
    const privateRedis = await startPrivateRedis();
    const redis = new RedisConnections(privateRedis.url);
    const bus = new RedisEventBus(redis, 'k:');
    const admin = new Redis(privateRedis.url);
    try {
      await redis.waitReady();
      let reconnects = 0;
      bus.onReconnect(() => reconnects++);
      const got: unknown[] = [];
      await bus.subscribe('ev.*', (_c, m) => got.push(m));
      await bus.publish('ev.1', 'before');
      await waitFor(() => got.length === 1, { what: 'first delivery' });

      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await waitFor(() => reconnects >= 1, { what: 'reconnect after CLIENT KILL' });
      // Publish until the re-subscription is live (a publish before it lands is lost: pub/sub is a doorbell).
      await waitFor(async () => (await bus.publish('ev.2', 'after-kill'), got.includes('after-kill')), { what: 'delivery after re-subscribe' });

      await privateRedis.stop();
      await privateRedis.start();
      await waitFor(() => reconnects >= 2, { what: 'reconnect after restart', timeoutMs: 15_000 });
      await waitFor(async () => (await bus.publish('ev.3', 'after-restart').catch(() => undefined), got.includes('after-restart')), {
        what: 'delivery after restart',
        timeoutMs: 15_000,
      });
    } finally {
      admin.disconnect();
      await bus.close();
      await redis.close();
      await privateRedis.stop();
    }
  });
});
