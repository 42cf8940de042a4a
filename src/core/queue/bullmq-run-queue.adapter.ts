import { hostname } from 'node:os';
import { Job, Queue, Worker } from 'bullmq';
import { JOB_QUEUES, JobName, JobPayloads, QUEUE_NAMES, QueueName } from '@contracts/jobs';
import { rootLogger } from '@core/logging/logger';
import type { RedisConnections } from '@core/redis/redis-connections';
import { EnqueueOptions, JobCounts, JobDispatch, QueueUnavailableError, RunQueue } from './run-queue.port';
import { settlesWithin } from '@core/async/within';

/** How long aborted handlers get to hand their work over before the queue connections close. */
const HANDOVER_MS = 5000;

export interface BullmqSettings {
  prefix: string;
  /** Job lock; a worker that dies is detected after this (then the job is redelivered). */
  lockDurationMs: number;
  enqueueTimeoutMs: number;
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });

/** BullMQ's prioritized set scores a job `priority × 2^32 + insertion counter`: a band per priority, oldest first. */
const PRIORITY_BAND = 2 ** 32;
/** A worker's Redis client name ends with its concurrency, so the api can sum the capacity of live workers. */
const workerName = (concurrency: number): string => `${hostname()}:${process.pid}:c${concurrency}`;
const concurrencyOf = (rawName: string | undefined): number => Number(/:c(\d+)$/.exec(rawName ?? '')?.[1] ?? 1);

/** RunQueue over BullMQ 6. BullMQ delivers; Postgres (run leases) decides who owns a run. */
export class BullmqRunQueue extends RunQueue {
  readonly backend = 'bullmq' as const;
  private readonly queues = new Map<QueueName, Queue>();
  private readonly workers: Worker[] = [];
  private readonly inflight = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(
    private readonly redis: RedisConnections,
    private readonly settings: BullmqSettings,
  ) {
    super();
  }

  private queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.redis.command, prefix: this.settings.prefix });
      queue.on('error', (err) => rootLogger().warn({ queue: name, err: err.message }, 'queue error'));
      this.queues.set(name, queue);
    }
    return queue;
  }

  async enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options: EnqueueOptions = {}): Promise<void> {
    const queue = this.queue(JOB_QUEUES[name]);
    try {
      await withTimeout(
        queue.add(name, payload, {
          jobId: options.jobId,
          delay: options.delayMs,
          priority: options.priority,
          attempts: 1,
          // Completed/failed jobs are removed so the same job id (a run id) can be enqueued again later,
          // e.g. when an approval requeues the run. Postgres keeps the history.
          removeOnComplete: true,
          removeOnFail: true,
        }),
        this.settings.enqueueTimeoutMs,
        'enqueue',
      );
    } catch (err) {
      throw new QueueUnavailableError(err);
    }
  }

  async consume(queues: QueueName[], concurrency: number, dispatch: JobDispatch): Promise<void> {
    for (const queueName of queues) {
      const worker = new Worker(
        queueName,
        async (job: Job) => {
          const controller = new AbortController();
          const key = `${queueName}/${job.id ?? ''}`;
          let settle!: () => void;
          const done = new Promise<void>((resolve) => (settle = resolve));
          this.inflight.set(key, { controller, done });
          try {
            await dispatch(job.name as JobName, job.data as JobPayloads[JobName], {
              jobId: job.id ?? '',
              attempt: job.attemptsStarted || 1,
              signal: controller.signal,
            });
          } finally {
            this.inflight.delete(key);
            settle();
          }
        },
        {
          connection: this.redis.createBlocking(`worker-${queueName}`),
          prefix: this.settings.prefix,
          name: workerName(concurrency),
          concurrency,
          lockDuration: this.settings.lockDurationMs,
          stalledInterval: Math.max(1000, Math.floor(this.settings.lockDurationMs / 2)),
          // Redelivery is safe: the run lease in Postgres rejects a second owner.
          maxStalledCount: 1000,
          autorun: true,
        },
      );
      worker.on('error', (err) => rootLogger().warn({ queue: queueName, err: err.message }, 'worker error'));
      worker.on('failed', (job, err) => rootLogger().error({ queue: queueName, job: job?.name, jobId: job?.id, err: err.message }, 'job failed'));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  async drain(graceMs: number): Promise<void> {
    const closing = Promise.all(this.workers.map((w) => w.close()));
    const timedOut = !(await settlesWithin(closing, graceMs));
    if (timedOut) {
      rootLogger().warn({ inflight: this.inflight.size }, 'drain grace elapsed; aborting in-flight jobs');
      const stopping = [...this.inflight.values()];
      for (const j of stopping) j.controller.abort(new Error('worker shutting down'));
      // Aborted handlers hand their work over (a run goes back to the queue for another worker) before the
      // connections close: wait for them a little, then close regardless.
      await settlesWithin(Promise.all(stopping.map((j) => j.done)), HANDOVER_MS);
      await Promise.all(this.workers.map((w) => w.close(true)));
    }
    this.workers.length = 0;
  }

  async counts(): Promise<JobCounts> {
    const result: JobCounts = {};
    for (const name of QUEUE_NAMES) {
      const c = await this.queue(name).getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized');
      result[name] = {
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
        active: c.active ?? 0,
        delayed: c.delayed ?? 0,
        completed: c.completed ?? 0,
        failed: c.failed ?? 0,
      };
    }
    return result;
  }

  async oldestWaitingMs(): Promise<Partial<Record<QueueName, number>>> {
    const result: Partial<Record<QueueName, number>> = {};
    const redis = this.redis.command;
    for (const name of QUEUE_NAMES) {
      const queue = this.queue(name);
      // The wait list's tail is its oldest job; the prioritized set's oldest are the first of each priority band.
      const ids: string[] = [];
      const tail = await redis.lindex(queue.keys.wait, -1);
      if (tail) ids.push(tail);
      let from = '-inf';
      for (let band = 0; band < 32; band++) {
        const [id, score] = await redis.zrangebyscore(queue.keys.prioritized, from, '+inf', 'WITHSCORES', 'LIMIT', 0, 1);
        if (!id) break;
        ids.push(id);
        from = String((Math.floor(Number(score) / PRIORITY_BAND) + 1) * PRIORITY_BAND);
      }
      let oldest = Infinity;
      for (const id of ids) {
        const [timestamp, delay] = await redis.hmget(queue.toKey(id), 'timestamp', 'delay');
        if (timestamp) oldest = Math.min(oldest, Number(timestamp) + Number(delay ?? 0));
      }
      if (oldest !== Infinity) result[name] = Math.max(0, Date.now() - oldest);
    }
    return result;
  }

  async capacity(): Promise<Record<QueueName, number>> {
    const entries = await Promise.all(
      QUEUE_NAMES.map(async (n) => {
        const workers = await this.queue(n)
          .getWorkers()
          // Redis unreachable: no worker can be seen, so none counts (health reports the queue down itself).
          .catch(() => []);
        return [n, workers.reduce((sum, w) => sum + concurrencyOf(w.rawname), 0)] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<QueueName, number>;
  }

  async workerCount(): Promise<number> {
    const counts = await Promise.all(
      QUEUE_NAMES.map((n) =>
        this.queue(n)
          .getWorkersCount()
          // As in capacity(): an unreachable queue shows no worker.
          .catch(() => 0),
      ),
    );
    return Math.max(0, ...counts);
  }

  async ping(): Promise<void> {
    await withTimeout(this.redis.command.ping(), 1000, 'redis ping');
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close(true)));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
