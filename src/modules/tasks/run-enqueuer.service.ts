import { Inject, Injectable } from '@nestjs/common';
import { rootLogger } from '@core/logging/logger';
import { RunQueue } from '@core/queue/run-queue.port';
import type { TaskRunEntity } from './task-run.entity';
import { TaskRunRepository } from './task-run.repository';

const PRIORITY: Record<string, number> = { urgent: 1, high: 2, normal: 5, low: 10 };

/**
 * Puts queued runs on the queue (job `run.execute`, job id = run id, so enqueue is idempotent). Postgres
 * decides; a failed enqueue only delays the run until the reconciler enqueues it again.
 */
@Injectable()
export class RunEnqueuer {
  constructor(
    @Inject(RunQueue) private readonly queue: RunQueue,
    private readonly runs: TaskRunRepository,
  ) {}

  /** Enqueues after commit; returns false (and logs) when the queue is unavailable. */
  /** `jobId`: another id than the run's, when the run's own job is still active (a hand-over from a draining worker). */
  async enqueue(run: Pick<TaskRunEntity, 'id' | 'tenantId'>, priority = '', jobId = run.id): Promise<boolean> {
    try {
      await this.queue.enqueue('run.execute', { runId: run.id, tenantId: run.tenantId }, { jobId, priority: PRIORITY[priority] ?? PRIORITY.normal });
      await this.runs.markEnqueued([run.id]);
      return true;
    } catch (err) {
      rootLogger().warn({ run_id: run.id, err: String(err) }, 'enqueue failed; the reconciler will enqueue the queued run');
      return false;
    }
  }

  /** With a concurrency cap, a finished run frees a slot: offer the oldest queued runs again. */
  async kickQueued(limit: number): Promise<void> {
    for (const run of await this.runs.oldestQueued(limit)) await this.enqueue(run);
  }
}
