import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { EventStore } from '@modules/events';
import { execSql } from '@core/database/sql';
import { RunEnqueuer } from './run-enqueuer.service';
import { RunExecutionService } from './run-execution.service';
import type { TaskRunEntity } from './task-run.entity';
import { TaskRunRepository } from './task-run.repository';
import { TaskRepository } from './task.repository';

/** Arbitrary fixed key: one reconciler pass at a time across the cluster (leader per tick). */
const RECONCILER_LOCK_KEY = 726_354_106;
const BATCH = 200;

/**
 * Recovery (docs/design.md §4.4): requeues running runs whose lease expired (`gap.run_disconnected`,
 * reason=worker_lease_expired) so they resume from their last persisted step, and enqueues queued runs
 * that are in Postgres but maybe not in the queue (a failed enqueue, a Redis loss, an embedded restart).
 */
@Injectable()
export class RunReconcilerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly events: EventStore,
    private readonly runs: TaskRunRepository,
    private readonly tasks: TaskRepository,
    private readonly enqueuer: RunEnqueuer,
    private readonly execution: RunExecutionService,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    // Embedded mode is one process: a run `running` at boot under another owner belonged to this process
    // before it stopped, so it is reclaimed at once instead of after its lease.
    const boot = this.config.mode === 'embedded' ? this.requeue('boot_reconcile') : Promise.resolve([]);
    this.running = boot
      .then((requeued) => this.enqueueQueued(requeued, true))
      .catch((err: unknown) => rootLogger().warn({ err: String(err) }, 'boot reconcile failed; the periodic pass retries'))
      .finally(() => (this.running = undefined));
    this.timer = setInterval(() => void this.tick(), this.config.tasks.reconcileIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // Only waits for the pass in flight: tick() logs its own failure, nothing is left to do with it here.
    await this.running?.catch(() => undefined);
  }

  /** One pass (also callable from tests). */
  async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = (async () => {
      try {
        const requeued = await this.requeue('worker_lease_expired');
        await this.enqueueQueued(requeued, false);
      } catch (err) {
        rootLogger().warn({ err: String(err) }, 'reconcile pass failed; retrying next interval');
      }
    })().finally(() => (this.running = undefined));
    await this.running;
  }

  private async requeue(reason: 'worker_lease_expired' | 'boot_reconcile'): Promise<TaskRunEntity[]> {
    const requeued = await this.events.transaction(async (tx) => {
      const { rows } = await execSql<{ locked: boolean }>(tx.manager, `SELECT pg_try_advisory_xact_lock($1) AS locked`, [RECONCILER_LOCK_KEY]);
      if (!rows[0]?.locked) return [];
      const stale =
        reason === 'boot_reconcile'
          ? await this.runs.lockRunningNotOwnedBy(tx.manager, this.execution.owner, BATCH)
          : await this.runs.lockExpired(tx.manager, BATCH);
      for (const run of stale) {
        await this.runs.transition(tx.manager, {
          tenantId: run.tenantId,
          runId: run.id,
          from: ['running'],
          set: { status: 'queued', queuedAt: () => 'now()', enqueuedAt: null },
          releaseLease: true,
        });
        await this.tasks.setStatus(tx.manager, { tenantId: run.tenantId, id: run.taskId, status: 'queued' });
        const base = { tenantId: run.tenantId, runId: run.id, taskId: run.taskId };
        await tx.emit({
          ...base,
          type: 'gap.run_disconnected',
          data: {
            reason,
            action: 'requeued',
            prior_status: 'running',
            prior_owner: run.leaseOwner,
            recovered_status: 'queued',
            recovery_strategy: 'resume_from_last_step',
            stale_threshold_ms: this.config.tasks.leaseSeconds * 1000,
          },
        });
        await tx.emit({ ...base, type: 'run.queued', data: { trigger: 'reconcile', reason } });
      }
      if (stale.length > 0) rootLogger().warn({ runs: stale.map((r) => r.id), reason }, 'requeued runs whose worker was lost');
      return stale;
    }, null);
    if (requeued.length > 0) this.metrics.leaseReclaimed('run', requeued.length);
    return requeued;
  }

  /** Enqueue is idempotent by job id; runs enqueued recently are left alone. */
  private async enqueueQueued(requeued: TaskRunEntity[], all: boolean): Promise<void> {
    for (const run of requeued) await this.enqueuer.enqueue(run);
    const before = all ? new Date() : new Date(Date.now() - this.config.tasks.reconcileIntervalMs);
    for (const run of await this.runs.queuedNeedingEnqueue(before, BATCH)) await this.enqueuer.enqueue(run);
  }
}
