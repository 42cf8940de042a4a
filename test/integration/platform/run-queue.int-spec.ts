import type { JobName, JobPayloads } from '@contracts/jobs';
import { BullmqRunQueue } from '@core/queue/bullmq-run-queue.adapter';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { JobContext, JobDispatch, QueueUnavailableError, RunQueue } from '@core/queue/run-queue.port';
import { RedisConnections } from '@core/redis/redis-connections';
import { startPrivateRedis, testRedisUrl, uniqueId, waitFor } from '../../support/infra';

interface Seen {
  name: JobName;
  payload: JobPayloads[JobName];
  ctx: JobContext;
}

interface Harness {
  queue: RunQueue;
  close(): Promise<void>;
}

const makeBullmq = async (url = testRedisUrl(), lockDurationMs = 30_000): Promise<Harness & { redis: RedisConnections }> => {
  const redis = new RedisConnections(url);
  await redis.waitReady();
  const queue = new BullmqRunQueue(redis, { prefix: uniqueId('q'), lockDurationMs, enqueueTimeoutMs: 2000 });
  return { queue, redis, close: async () => (await queue.close(), await redis.close()) };
};

const adapters: [string, () => Promise<Harness>][] = [
  [
    'in-process',
    async () => {
      const queue = new InProcessRunQueue();
      return { queue, close: () => queue.close() };
    },
  ],
  ['bullmq', () => makeBullmq()],
];

/** A dispatch that records jobs and can hold them until released. */
function recorder() {
  const seen: Seen[] = [];
  const gates = new Map<string, () => void>();
  let hold = false;
  const dispatch: JobDispatch = async (name, payload, ctx) => {
    seen.push({ name, payload, ctx });
    if (hold) {
      await new Promise<void>((resolve, reject) => {
        gates.set(ctx.jobId, resolve);
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
      });
    }
  };
  return { seen, dispatch, gates, holdJobs: () => (hold = true) };
}

describe.each(adapters)('RunQueue behaviour (%s)', (_name, make) => {
  let h: Harness;
  beforeEach(async () => (h = await make()));
  afterEach(() => h.close());

  it('delivers an enqueued job with its payload to the consumer, first attempt', async () => {
    const r = recorder();
    await h.queue.consume(['system'], 2, r.dispatch);
    await h.queue.enqueue('system.echo', { token: 'abc', sleepMs: 0 }, { jobId: 'job-1' });
    await waitFor(() => r.seen.length === 1, { what: 'delivery' });
    expect(r.seen[0]).toMatchObject({ name: 'system.echo', payload: { token: 'abc', sleepMs: 0 }, ctx: { jobId: 'job-1', attempt: 1 } });
  });

  it('does not deliver jobs of queues it does not consume', async () => {
    const r = recorder();
    await h.queue.consume(['runs'], 1, r.dispatch);
    await h.queue.enqueue('system.echo', { token: 'x' });
    await waitFor(async () => (await h.queue.counts()).system.waiting === 1, { what: 'job waiting' });
    expect(r.seen).toEqual([]);
  });

  it('treats a second enqueue with the same job id as a no-op while the first is pending', async () => {
    const r = recorder();
    await h.queue.enqueue('system.echo', { token: 'first' }, { jobId: 'same' });
    await h.queue.enqueue('system.echo', { token: 'second' }, { jobId: 'same' });
    await waitFor(async () => (await h.queue.counts()).system.waiting === 1, { what: 'one waiting job' });
    await h.queue.consume(['system'], 1, r.dispatch);
    await waitFor(() => r.seen.length === 1, { what: 'delivery' });
    expect(r.seen.map((s) => (s.payload as { token: string }).token)).toEqual(['first']);
    expect((await h.queue.counts()).system.waiting).toBe(0);
  });

  it('accepts the same job id again once the first job finished', async () => {
    const r = recorder();
    await h.queue.consume(['system'], 1, r.dispatch);
    await h.queue.enqueue('system.echo', { token: 'a' }, { jobId: 'again' });
    await waitFor(async () => r.seen.length === 1 && (await h.queue.counts()).system.active === 0, { what: 'first run finished' });
    await h.queue.enqueue('system.echo', { token: 'b' }, { jobId: 'again' });
    await waitFor(() => r.seen.length === 2, { what: 'second delivery' });
  });

  it('drain waits for an in-flight job that finishes within the grace period', async () => {
    const r = recorder();
    r.holdJobs();
    await h.queue.consume(['system'], 1, r.dispatch);
    await h.queue.enqueue('system.echo', { token: 'slow' }, { jobId: 'slow' });
    await waitFor(() => r.gates.has('slow'), { what: 'job started' });
    let drained = false;
    const draining = h.queue.drain(10_000).then(() => (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    r.gates.get('slow')!();
    await draining;
    expect(r.seen[0].ctx.signal.aborted).toBe(false);
  });

  it('reports the age of the oldest ready job per queue, whatever its priority (delayed jobs are not waiting)', async () => {
    expect(await h.queue.oldestWaitingMs()).toEqual({});
    await h.queue.enqueue('system.echo', { token: 'old-normal' }, { priority: 5 });
    // A fixed wait on purpose: the jobs' ages differ only by time passing, which nothing else shows.
    await new Promise((r) => setTimeout(r, 120));
    // Newer, but first in line: the oldest is still the normal-priority job behind it.
    await h.queue.enqueue('system.echo', { token: 'new-urgent' }, { priority: 1 });
    await h.queue.enqueue('system.echo', { token: 'new-plain' });
    await h.queue.enqueue('system.echo', { token: 'later' }, { delayMs: 60_000 });
    const oldest = await h.queue.oldestWaitingMs();
    expect(oldest.system).toBeGreaterThanOrEqual(100);
    expect(oldest.system).toBeLessThan(5000);
    expect(oldest.runs).toBeUndefined();
  });

  it('reports capacity as the concurrency of the live consumers of each queue', async () => {
    expect(await h.queue.capacity()).toEqual({ runs: 0, system: 0 });
    await h.queue.consume(['system'], 3, recorder().dispatch);
    await waitFor(async () => (await h.queue.capacity()).system === 3, { what: 'capacity of the consumer' });
    expect((await h.queue.capacity()).runs).toBe(0);
    await h.queue.drain(1000);
    await waitFor(async () => (await h.queue.capacity()).system === 0, { what: 'capacity gone after drain' });
  });

  it('drain aborts an in-flight job past the grace period', async () => {
    const r = recorder();
    r.holdJobs();
    await h.queue.consume(['system'], 1, r.dispatch);
    await h.queue.enqueue('system.echo', { token: 'stuck' }, { jobId: 'stuck' });
    await waitFor(() => r.gates.has('stuck'), { what: 'job started' });
    await h.queue.drain(100);
    expect(r.seen[0].ctx.signal.aborted).toBe(true);
  });
});

describe('BullmqRunQueue against an unavailable Redis', () => {
  it('fails enqueue fast with QueueUnavailableError instead of buffering', async () => {
    const privateRedis = await startPrivateRedis();
    const h = await makeBullmq(privateRedis.url);
    try {
      await h.queue.enqueue('system.echo', { token: 'ok' });
      await privateRedis.stop();
      await waitFor(() => h.redis.command.status !== 'ready', { what: 'connection loss noticed' });
      const started = Date.now();
      await expect(h.queue.enqueue('system.echo', { token: 'lost?' })).rejects.toBeInstanceOf(QueueUnavailableError);
      // "Fast" here means it did not wait for Redis to come back (the enqueue timeout is 2 s).
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await h.close().catch(() => undefined);
      await privateRedis.stop();
    }
  });
});

describe('BullmqRunQueue capacity', () => {
  it('sums the concurrency of every live worker process of a queue', async () => {
    const prefix = uniqueId('rq');
    const settings = { prefix, lockDurationMs: 30_000, enqueueTimeoutMs: 2000 };
    const [redisA, redisB] = [new RedisConnections(testRedisUrl()), new RedisConnections(testRedisUrl())];
    await Promise.all([redisA.waitReady(), redisB.waitReady()]);
    const [a, b] = [new BullmqRunQueue(redisA, settings), new BullmqRunQueue(redisB, settings)];
    try {
      await a.consume(['runs', 'system'], 4, recorder().dispatch);
      await b.consume(['runs'], 2, recorder().dispatch);
      await waitFor(async () => (await a.capacity()).runs === 6, { what: 'both workers counted' });
      expect(await b.capacity()).toEqual({ runs: 6, system: 4 });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([redisA.close(), redisB.close()]);
    }
  });
});

describe('BullmqRunQueue redelivery', () => {
  it('redelivers a job whose worker died holding it, as a later attempt', async () => {
    const prefix = uniqueId('rq');
    const redisA = new RedisConnections(testRedisUrl());
    const redisB = new RedisConnections(testRedisUrl());
    await Promise.all([redisA.waitReady(), redisB.waitReady()]);
    const settings = { prefix, lockDurationMs: 1000, enqueueTimeoutMs: 2000 };
    const a = new BullmqRunQueue(redisA, settings);
    const b = new BullmqRunQueue(redisB, settings);
    try {
      const first = recorder();
      first.holdJobs();
      await a.consume(['system'], 1, first.dispatch);
      await a.enqueue('system.echo', { token: 'orphan' }, { jobId: 'orphan' });
      await waitFor(() => first.gates.has('orphan'), { what: 'worker A took the job' });
      // Simulate a crash: A's connections vanish without completing or releasing the job.
      await redisA.close();
      const second = recorder();
      await b.consume(['system'], 1, second.dispatch);
      await waitFor(() => second.seen.length === 1, { timeoutMs: 15_000, what: 'redelivery to worker B' });
      expect(second.seen[0].ctx).toMatchObject({ jobId: 'orphan' });
      expect(second.seen[0].ctx.attempt).toBeGreaterThanOrEqual(2);
    } finally {
      await b.close();
      await redisB.close();
      await a.close().catch(() => undefined);
    }
  });
});
