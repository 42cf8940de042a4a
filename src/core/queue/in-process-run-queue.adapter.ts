import { JOB_QUEUES, JobName, JobPayloads, QUEUE_NAMES, QueueName } from '@contracts/jobs';
import { rootLogger } from '@core/logging/logger';
import { EnqueueOptions, JobCounts, JobDispatch, RunQueue } from './run-queue.port';
import { settlesWithin, within } from '@core/async/within';

interface PendingJob {
  id: string;
  name: JobName;
  payload: unknown;
  priority: number;
  readyAt: number;
}

/**
 * RunQueue for embedded mode: jobs live in this process. A crash loses queued jobs, which is safe because
 * Postgres is the source of truth: the reconciler re-enqueues runs that are queued in the database.
 */
export class InProcessRunQueue extends RunQueue {
  readonly backend = 'in_process' as const;
  private readonly pending = new Map<QueueName, PendingJob[]>();
  private readonly known = new Set<string>();
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly completed = new Map<QueueName, number>();
  private readonly failed = new Map<QueueName, number>();
  private consumers: { queues: QueueName[]; concurrency: number; dispatch: JobDispatch } | undefined;
  private draining = false;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  async enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options: EnqueueOptions = {}): Promise<void> {
    const id = options.jobId ?? `job-${++this.seq}`;
    if (this.known.has(id)) return;
    this.known.add(id);
    const queue = JOB_QUEUES[name];
    const list = this.pending.get(queue) ?? [];
    list.push({ id, name, payload, priority: options.priority ?? 0, readyAt: Date.now() + (options.delayMs ?? 0) });
    this.pending.set(queue, list);
    this.schedule(options.delayMs ?? 0);
  }

  async consume(queues: QueueName[], concurrency: number, dispatch: JobDispatch): Promise<void> {
    this.consumers = { queues, concurrency, dispatch };
    this.draining = false;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (!this.consumers || this.draining) return;
    if (delayMs <= 0) {
      setImmediate(() => this.pump());
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), delayMs);
    this.timer.unref();
  }

  private pump(): void {
    if (!this.consumers || this.draining) return;
    const { queues, concurrency, dispatch } = this.consumers;
    const now = Date.now();
    let nextReady = Infinity;
    for (const queue of queues) {
      const list = this.pending.get(queue) ?? [];
      list.sort((a, b) => a.priority - b.priority || a.readyAt - b.readyAt);
      const activeInQueue = () => [...this.active.keys()].filter((k) => k.startsWith(`${queue}/`)).length;
      while (activeInQueue() < concurrency) {
        const index = list.findIndex((j) => j.readyAt <= now);
        if (index < 0) break;
        const [job] = list.splice(index, 1);
        this.run(queue, job, dispatch);
      }
      for (const j of list) nextReady = Math.min(nextReady, j.readyAt);
    }
    if (nextReady !== Infinity) this.schedule(Math.max(1, nextReady - now));
  }

  private run(queue: QueueName, job: PendingJob, dispatch: JobDispatch): void {
    const controller = new AbortController();
    const key = `${queue}/${job.id}`;
    const done = (async () => {
      try {
        await dispatch(job.name, job.payload as JobPayloads[JobName], { jobId: job.id, attempt: 1, signal: controller.signal });
        this.completed.set(queue, (this.completed.get(queue) ?? 0) + 1);
      } catch (err) {
        this.failed.set(queue, (this.failed.get(queue) ?? 0) + 1);
        rootLogger().error({ queue, job: job.name, jobId: job.id, err: String(err) }, 'job failed');
      } finally {
        this.active.delete(key);
        this.known.delete(job.id);
        this.schedule(0);
      }
    })();
    this.active.set(key, { controller, done });
  }

  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    clearTimeout(this.timer);
    const all = Promise.all([...this.active.values()].map((a) => a.done));
    const timedOut = !(await settlesWithin(all, graceMs));
    if (timedOut) {
      for (const a of this.active.values()) a.controller.abort(new Error('process shutting down'));
      await within(all, 1000);
    }
  }

  async counts(): Promise<JobCounts> {
    const result: JobCounts = {};
    const now = Date.now();
    for (const queue of QUEUE_NAMES) {
      const list = this.pending.get(queue) ?? [];
      result[queue] = {
        waiting: list.filter((j) => j.readyAt <= now).length,
        delayed: list.filter((j) => j.readyAt > now).length,
        active: [...this.active.keys()].filter((k) => k.startsWith(`${queue}/`)).length,
        completed: this.completed.get(queue) ?? 0,
        failed: this.failed.get(queue) ?? 0,
      };
    }
    return result;
  }

  async oldestWaitingMs(): Promise<Partial<Record<QueueName, number>>> {
    const now = Date.now();
    const result: Partial<Record<QueueName, number>> = {};
    for (const [queue, list] of this.pending) {
      const ready = list.filter((j) => j.readyAt <= now);
      if (ready.length > 0) result[queue] = now - Math.min(...ready.map((j) => j.readyAt));
    }
    return result;
  }

  async workerCount(): Promise<number> {
    return this.consumers && !this.draining ? 1 : 0;
  }

  async capacity(): Promise<Record<QueueName, number>> {
    const live = this.consumers && !this.draining ? this.consumers : undefined;
    return Object.fromEntries(QUEUE_NAMES.map((q) => [q, live?.queues.includes(q) ? live.concurrency : 0])) as Record<QueueName, number>;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.draining = true;
    clearTimeout(this.timer);
  }
}
