import { RedisEventBus } from '@core/bus/redis-event-bus.adapter';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { MemoryLiveStreamBuffer } from '@core/live-streams/memory-live-stream-buffer.adapter';
import { RedisLiveStreamBuffer } from '@core/live-streams/redis-live-stream-buffer.adapter';
import { RedisConnections } from '@core/redis/redis-connections';
import { testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import { PortPeer } from '../../support/port-peer';

interface Harness {
  live: LiveStreamBuffer;
  close(): Promise<void>;
}

const TTL_MS = 400;

const adapters: [string, (ttlMs: number, prefix?: string) => Promise<Harness>][] = [
  [
    'memory ring',
    async (ttlMs) => {
      const live = new MemoryLiveStreamBuffer(ttlMs);
      return { live, close: () => live.close() };
    },
  ],
  [
    'redis streams',
    async (ttlMs, prefix = uniqueId('ls')) => {
      const redis = new RedisConnections(testRedisUrl());
      await redis.waitReady();
      const bus = new RedisEventBus(redis, `${prefix}:bus:`);
      const live = new RedisLiveStreamBuffer(redis, bus, ttlMs, `${prefix}:live:`);
      await live.init();
      return { live, close: async () => (await live.close(), await bus.close(), await redis.close()) };
    },
  ],
];

describe.each(adapters)('LiveStreamBuffer behaviour (%s)', (_name, make) => {
  let h: Harness;
  beforeEach(async () => (h = await make(60_000)));
  afterEach(() => h.close());

  it('numbers chunks from 1 and reads exactly the chunks after an index', async () => {
    const indexes: number[] = [];
    for (const data of ['a', 'b', 'c', 'd', 'e']) indexes.push(await h.live.append('s1', data));
    expect(indexes).toEqual([1, 2, 3, 4, 5]);
    expect((await h.live.read('s1', 0)).chunks.map((c) => c.data)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await h.live.read('s1', 3)).toEqual({
      chunks: [
        { index: 4, data: 'd' },
        { index: 5, data: 'e' },
      ],
      done: false,
      expired: false,
    });
    expect((await h.live.read('s1', 1, { limit: 2 })).chunks.map((c) => c.index)).toEqual([2, 3]);
    expect((await h.live.read('s1', 5)).chunks).toEqual([]);
  });

  it('keeps streams apart', async () => {
    await h.live.append('x', 'x1');
    await h.live.append('y', 'y1');
    expect((await h.live.read('x', 0)).chunks).toEqual([{ index: 1, data: 'x1' }]);
  });

  it('wakes a blocked live-tail read when a chunk arrives', async () => {
    await h.live.append('tail', 'first');
    const pending = h.live.read('tail', 1, { blockMs: 10_000 });
    await h.live.append('tail', 'second');
    expect(await pending).toEqual({ chunks: [{ index: 2, data: 'second' }], done: false, expired: false });
  });

  it('returns empty when a blocking read times out', async () => {
    await h.live.append('quiet', 'only');
    expect(await h.live.read('quiet', 1, { blockMs: 50 })).toEqual({ chunks: [], done: false, expired: false });
  });

  it('reports done only after the last chunk has been read, and wakes tailers on done', async () => {
    await h.live.append('d', 'one');
    await h.live.append('d', 'two');
    const tail = h.live.read('d', 2, { blockMs: 10_000 });
    await h.live.markDone('d');
    expect(await tail).toEqual({ chunks: [], done: true, expired: false });
    expect(await h.live.read('d', 0)).toEqual({
      chunks: [
        { index: 1, data: 'one' },
        { index: 2, data: 'two' },
      ],
      done: true,
      expired: false,
    });
    expect((await h.live.read('d', 0, { limit: 1 })).done).toBe(false);
  });

  it('says expired for a stream it does not hold', async () => {
    expect(await h.live.read('never-written', 0)).toEqual({ chunks: [], done: false, expired: true });
  });
});

describe.each(adapters)('LiveStreamBuffer expiry (%s)', (_name, make) => {
  it('expires a stream after the TTL since its last write', async () => {
    const h = await make(TTL_MS);
    try {
      await h.live.append('short', 'x');
      expect((await h.live.read('short', 0)).expired).toBe(false);
      await waitFor(async () => (await h.live.read('short', 0)).expired, { timeoutMs: 5000, what: 'expiry' });
    } finally {
      await h.close();
    }
  });
});

describe('RedisLiveStreamBuffer across processes', () => {
  it('a reader in this process resumes from an index written by another process, and tails it live', async () => {
    const prefix = uniqueId('lx');
    const peer = await PortPeer.start(testRedisUrl(), prefix);
    const h = await adapters[1][1](60_000, prefix);
    try {
      for (const data of ['p1', 'p2', 'p3']) await peer.call('append', { stream: 'turn', data });
      expect((await h.live.read('turn', 1)).chunks).toEqual([
        { index: 2, data: 'p2' },
        { index: 3, data: 'p3' },
      ]);

      const tail = h.live.read('turn', 3, { blockMs: 10_000 });
      await peer.call('append', { stream: 'turn', data: 'p4' });
      expect((await tail).chunks).toEqual([{ index: 4, data: 'p4' }]);

      await h.live.append('turn', 'here5');
      await h.live.markDone('turn');
      const fromPeer = await peer.call('read', { stream: 'turn', after: 3 });
      expect(fromPeer.result).toEqual({
        chunks: [
          { index: 4, data: 'p4' },
          { index: 5, data: 'here5' },
        ],
        done: true,
        expired: false,
      });
    } finally {
      await peer.stop();
      await h.close();
    }
  });
});
