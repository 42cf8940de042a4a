import { ignoreFailure } from '@core/logging/ignore-failure';
import { sleep } from '@core/async/sleep';
import { keepLease, LEASE_OWNER, newLeaseToken } from '@core/lease';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { BusCancels, busChannels, EventBus } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { jobOrigin, RequestOrigin } from '@core/context/request-context';
import { rootLogger } from '@core/logging/logger';
import type { JobContext } from '@core/queue/run-queue.port';
import { planHash } from '@modules/approvals';
import { ExecutorRegistry } from './executor-registry.service';
import { RunEnqueuer } from './run-enqueuer.service';
import type { ExecutionContext, ExecutionOutcome, RunExecutor } from './run-executor';
import { LeaseLostError, RunWriter, RunWriterDeps, StorageLimitError } from './run-writer';
import type { ClaimResult } from './task-run.repository';
import type { TaskRunEntity } from './task-run.entity';
import type { TaskEntity } from './task.entity';
import { retryTransient } from './transient-errors';
import { isDir, resolveInside, workspaceUnavailable, WorkspaceService } from '@modules/workspaces';

/** Why a failed run's result may go unrecorded: its lease expires and the reconciler requeues it. */
const FINISH_LOST = 'the lease is lost or the database unreachable; the run is requeued when its lease expires';

/** Worker side of a run (docs/design.md §4.4): claim the lease, heartbeat, execute, record the result. */
@Injectable()
export class RunExecutionService implements OnApplicationShutdown {
  /** This process as a lease owner. */
  readonly owner = LEASE_OWNER;
  /** Cancel from any api process reaches the worker running the run (the heartbeat is the fallback). */
  private readonly cancels: BusCancels<{ runId: string }>;

  constructor(
    private readonly config: AppConfig,
    private readonly deps: RunWriterDeps,
    private readonly registry: ExecutorRegistry,
    private readonly enqueuer: RunEnqueuer,
    private readonly workspaces: WorkspaceService,
    @Inject(EventBus) bus: EventBus,
  ) {
    this.cancels = new BusCancels(bus, busChannels.runCancel);
  }

  private get leaseMs(): number {
    return this.config.tasks.leaseSeconds * 1000;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cancels.close();
  }

  /** The `run.execute` job. */
  async execute(payload: JobPayloads['run.execute'], job: JobContext): Promise<void> {
    void this.cancels.listen().catch(ignoreFailure('listening for run cancel signals', 'a cancelled run is noticed at its next lease heartbeat instead'));
    const token = newLeaseToken();
    const origin = jobOrigin(job.jobId);
    const claim = await this.claim(payload, token, job.signal, origin);
    if (!claim) return;
    const { run } = claim;
    const writer = this.deps.writer({
      tenantId: run.tenantId,
      taskId: run.taskId,
      runId: run.id,
      token,
      origin,
      kind: run.executionKind,
      startedAt: run.startedAt,
    });
    const controller = new AbortController();
    let draining = false;
    const onJobAbort = () => {
      // Shutdown past the grace period: stop writing, then hand the run over (below) instead of leaving it to expire.
      draining = true;
      writer.halt('worker shutting down');
      controller.abort(new Error('worker shutting down'));
    };
    job.signal.addEventListener('abort', onJobAbort, { once: true });
    const unregister = this.cancels.register(run.id, () => controller.abort(new Error('run cancelled')));
    const stopHeartbeat = keepLease(() => this.deps.runs.heartbeat(run.id, token, this.leaseMs), {
      leaseMs: this.leaseMs,
      intervalMs: Math.floor(this.leaseMs / 2),
      what: { run_id: run.id, request_id: origin.requestId },
      onLost: () => {
        if (controller.signal.aborted) return;
        writer.halt('lease lost');
        controller.abort(new Error('lease lost or run cancelled'));
      },
    });
    try {
      await this.runClaimed(claim, writer, controller.signal);
    } catch (err) {
      if (err instanceof LeaseLostError) {
        rootLogger().warn({ run_id: run.id, request_id: origin.requestId, err: err.message }, 'stopped: lease lost, run cancelled or worker stopping');
      } else if (err instanceof StorageLimitError) {
        await writer.finish({ status: 'failed', error: err.message, errorKind: err.kind }).catch(ignoreFailure('recording the failed run', FINISH_LOST));
      } else {
        rootLogger().error({ run_id: run.id, request_id: origin.requestId, err: err instanceof Error ? err.stack : String(err) }, 'run execution failed');
        await writer
          .finish({ status: 'failed', error: err instanceof Error ? err.message : String(err), errorKind: 'internal_error' })
          .catch(ignoreFailure('recording the failed run', FINISH_LOST));
      }
    } finally {
      stopHeartbeat();
      job.signal.removeEventListener('abort', onJobAbort);
      unregister();
    }
    if (draining) await this.handOver(run, token, origin);
    if (this.config.tasks.maxConcurrent > 0)
      void this.enqueuer
        .kickQueued(this.config.tasks.maxConcurrent)
        .catch(ignoreFailure('enqueuing the next queued runs', 'the reconciler enqueues queued runs on its next pass'));
  }

  /**
   * A draining worker's run goes back to the queue at once (its lease released, still held by this token) for another
   * worker to resume from its last persisted step: no wait for the lease to expire. A step that was in flight is
   * marked handed over: an idempotent one runs again there, a side effect is reported, never repeated. If
   * this fails, the lease expires into the usual reclaim.
   */
  private async handOver(run: TaskRunEntity, token: string, origin: RequestOrigin): Promise<void> {
    try {
      const moved = await this.deps.events.transaction(async (tx) => {
        const ok = await this.deps.runs.transition(tx.manager, {
          tenantId: run.tenantId,
          runId: run.id,
          from: ['running'],
          set: { status: 'queued', queuedAt: () => 'now()', enqueuedAt: null },
          releaseLease: true,
          leaseToken: token,
        });
        if (!ok) return false;
        await this.deps.tasks.setStatus(tx.manager, { tenantId: run.tenantId, id: run.taskId, status: 'queued' });
        await this.deps.steps.markHandedOver(tx.manager, run.tenantId, run.id);
        const base = { tenantId: run.tenantId, runId: run.id, taskId: run.taskId };
        await tx.emit({
          ...base,
          type: 'gap.run_disconnected',
          data: {
            reason: 'worker_shutdown',
            action: 'handed_over',
            prior_status: 'running',
            prior_owner: this.owner,
            recovered_status: 'queued',
            recovery_strategy: 'resume_from_last_step',
          },
        });
        await tx.emit({ ...base, type: 'run.queued', data: { trigger: 'handover', reason: 'worker_shutdown' } });
        return true;
      }, origin);
      if (moved) await this.enqueuer.enqueue(run, '', `${run.id}.handover.${run.attempts}`);
      rootLogger().info({ run_id: run.id, handed_over: moved }, 'draining worker handed its run over');
    } catch (err) {
      rootLogger().warn({ run_id: run.id, err: String(err) }, 'hand-over failed; the run is reclaimed when its lease expires');
    }
  }

  /**
   * Takes the lease. A run whose lease is still held (a redelivered job while the owner lives, or a
   * paused owner) is waited on until the lease expires, then claimed; a live owner keeps it.
   */
  private async claim(payload: JobPayloads['run.execute'], token: string, signal: AbortSignal, origin: RequestOrigin): Promise<ClaimResult | null> {
    for (let attempt = 0; attempt < 3 && !signal.aborted; attempt += 1) {
      const result = await retryTransient(() =>
        this.deps.events.transaction(async (tx) => {
          const r = await this.deps.runs.claim(tx.manager, {
            tenantId: payload.tenantId,
            runId: payload.runId,
            owner: this.owner,
            token,
            leaseMs: this.leaseMs,
            maxConcurrent: this.config.tasks.maxConcurrent,
          });
          if (!('previousStatus' in r)) return r;
          const base = { tenantId: r.run.tenantId, runId: r.run.id, taskId: r.run.taskId };
          if (r.previousStatus === 'running') {
            await tx.emit({
              ...base,
              type: 'gap.run_disconnected',
              data: {
                reason: 'worker_lease_expired',
                action: 'reclaimed',
                prior_status: 'running',
                prior_owner: r.previousOwner,
                recovered_status: 'running',
                recovery_strategy: 'resume_from_last_step',
                stale_threshold_ms: this.leaseMs,
              },
            });
          }
          await this.deps.tasks.setStatus(tx.manager, { tenantId: r.run.tenantId, id: r.run.taskId, status: 'running', started: r.run.attempts === 1 });
          const checkpoint = r.run.checkpoint;
          await tx.emit({
            ...base,
            type: 'run.started',
            data: {
              attempt: r.run.attempts,
              worker: this.owner,
              lease_expires_at: r.run.leaseExpiresAt?.toISOString(),
              ...(checkpoint
                ? {
                    resume_from_run_id: checkpoint.source_run_id,
                    resume_from_step_id: checkpoint.last_completed_step_id,
                    resume_from_event_sequence: checkpoint.last_event_sequence,
                  }
                : {}),
            },
          });
          return r;
        }, origin),
      );
      if ('previousStatus' in result) {
        if (result.previousStatus === 'running') this.deps.metrics.leaseReclaimed('run');
        return result;
      }
      if (result.reason !== 'lease_held') return null;
      const wait = result.leaseRemainingMs ?? 0;
      if (wait > 2 * this.leaseMs) return null;
      await sleep(wait + 100, signal);
    }
    return null;
  }

  private async runClaimed(claim: ClaimResult, writer: RunWriter, signal: AbortSignal): Promise<void> {
    const { run } = claim;
    const task = await this.deps.tasks.find(run.tenantId, run.taskId);
    const executor = this.registry.get(run.executionKind);
    const runner = this.registry.runner(run.executionKind);
    if (!task || !executor || !runner) {
      await writer.finish({ status: 'failed', error: `no executor for execution_kind ${run.executionKind}`, errorKind: 'executor_unavailable' });
      return;
    }
    const workspace = await this.prepareWorkspace(task, run, writer, signal);
    if (!workspace) return;
    if (!(await this.approvedPlanMatches(executor, task, run, writer))) return;
    const ctx: ExecutionContext = {
      task,
      run,
      workspace: {
        path: workspace,
        resolve: (requested, what) => resolveInside(workspace, requested, what),
        readOnly: task.sandboxReadOnly,
        network: task.sandboxNetwork,
      },
      signal,
      writer,
      checkpoint: run.checkpoint,
      firstStepIndex: 2,
      config: this.config.tasks,
    };
    const outcome: ExecutionOutcome = await runner.execute(ctx);
    if (outcome.status === 'awaiting_approval') return;
    const durationMs = run.startedAt ? Date.now() - run.startedAt.getTime() : undefined;
    if (outcome.status === 'completed') await writer.finish({ status: 'completed', data: { duration_ms: durationMs, ...(outcome.summary ?? {}) } });
    else await writer.finish({ status: 'failed', error: outcome.error, errorKind: outcome.errorKind, data: { duration_ms: durationMs } });
  }

  /** Step 1 of every run: the workspace (idempotent: redone after a clean hand-over; a crash mid-copy fails it, worker_lost). */
  private async prepareWorkspace(task: TaskEntity, run: TaskRunEntity, writer: RunWriter, signal: AbortSignal): Promise<string | null> {
    let path = '';
    const { outcome } = await writer.step(
      {
        index: 1,
        kind: 'workspace',
        title: 'Prepare workspace',
        toolName: 'workspace_prepare',
        input: { workspace_mode: task.workspaceMode || 'ephemeral', path: run.workspacePath, resumed_from_run_id: run.resumedFromRunId ?? undefined },
        idempotent: true,
      },
      async () => {
        try {
          const prepared = await this.workspaces.prepare(task, run, signal);
          path = prepared.path;
          return { status: 'completed', outputSummary: { path: prepared.path, source: prepared.source } };
        } catch (err) {
          return { status: 'failed', error: err instanceof Error ? err.message : String(err), errorKind: 'workspace_error' };
        }
      },
    );
    if (outcome.status !== 'completed') {
      await writer.finish({ status: 'failed', error: outcome.error ?? 'workspace preparation failed', errorKind: outcome.errorKind ?? 'workspace_error' });
      return null;
    }
    if (path) return path;
    // Replayed (completed by an earlier attempt, maybe on a worker that died): it must be reachable from here.
    const replayed = (outcome.outputSummary?.path as string | undefined) || run.workspacePath;
    if (task.workspaceMode !== 'in_place' && !(await isDir(replayed))) {
      await writer.finish({ status: 'failed', error: workspaceUnavailable(replayed), errorKind: 'workspace_unavailable' });
      return null;
    }
    return replayed;
  }

  /** A gated run executes exactly the approved plan (argv/cwd, or file operation and content). */
  private async approvedPlanMatches(executor: RunExecutor, task: TaskEntity, run: TaskRunEntity, writer: RunWriter): Promise<boolean> {
    const approvals = await this.deps.approvals.listForRun(run.tenantId, run.id);
    const gate = approvals.find((a) => a.kind !== 'agent_loop_tool_call' && a.status === 'approved');
    if (!gate) return true;
    if (gate.actionHash === planHash(executor.plan(task, run.workspacePath).identity)) return true;
    await writer.finish({ status: 'failed', error: 'the plan to run differs from the approved plan', errorKind: 'approval_plan_mismatch' });
    return false;
  }

  /** Runs executing in this process (for stats). */
  activeCount(): number {
    return this.cancels.size;
  }
}
