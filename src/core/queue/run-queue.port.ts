import type { JobName, JobPayloads, QueueName } from '@contracts/jobs';

export interface EnqueueOptions {
  /** Idempotency: a second enqueue with the same id while the first is pending is a no-op. */
  jobId?: string;
  delayMs?: number;
  priority?: number;
}

export interface JobContext {
  jobId: string;
  /** 1 on first delivery; higher on redelivery after a stalled worker. */
  attempt: number;
  /** Aborted when the process is draining past its grace period. */
  signal: AbortSignal;
}

export type JobDispatch = <N extends JobName>(name: N, payload: JobPayloads[N], ctx: JobContext) => Promise<void>;

export type JobCounts = Record<string, Record<'waiting' | 'active' | 'delayed' | 'completed' | 'failed', number>>;

export class QueueUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`queue unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'QueueUnavailableError';
  }
}

/** RunQueue port (docs/design.md §3): BullMQ in scaled mode, in-process in embedded mode. */
export abstract class RunQueue {
  abstract readonly backend: 'bullmq' | 'in_process';
  /** Fails fast with QueueUnavailableError when the backend is unreachable. */
  abstract enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options?: EnqueueOptions): Promise<void>;
  /** Starts consuming `queues` with `concurrency` jobs at a time each. */
  abstract consume(queues: QueueName[], concurrency: number, dispatch: JobDispatch): Promise<void>;
  /** Stops taking jobs and waits up to `graceMs` for in-flight jobs; then aborts them. */
  abstract drain(graceMs: number): Promise<void>;
  abstract counts(): Promise<JobCounts>;
  /** Per queue, how long the oldest job that is ready to run has waited (ms); a queue where none waits is absent. */
  abstract oldestWaitingMs(): Promise<Partial<Record<QueueName, number>>>;
  abstract workerCount(): Promise<number>;
  /** Per queue, the jobs its live consumers run at once (the sum of their concurrency); 0 without a consumer. */
  abstract capacity(): Promise<Record<QueueName, number>>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}
