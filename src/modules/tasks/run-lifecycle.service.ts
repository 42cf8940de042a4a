import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { busChannels, EventBus } from '@core/bus';
import type { RequestOrigin } from '@core/context/request-context';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { ApprovalsService } from '@modules/approvals';
import { toApprovalResponse } from '@modules/approvals';
import { EventStore, EventTx } from '@modules/events';
import { ExecutorRegistry } from './executor-registry.service';
import { RunEnqueuer } from './run-enqueuer.service';
import { assertTransition, isTerminal, RunStatus, sourcesOf } from './run-status';
import { toRunResponse } from './task-run.dto';
import { RunCheckpoint, TaskRunEntity } from './task-run.entity';
import { newId } from './task-ids';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepRepository } from './task-step.repository';
import { TaskRepository } from './task.repository';
import { ExecutionKindUnavailableError, RunNotFoundError, RunTransitionError, TaskBusyError, TaskNotFoundError } from './tasks.errors';
import { WorkspaceService } from '@modules/workspaces';
import { isUniqueViolation } from '@core/database/database.errors';

/** start, retry and resume here; executors' own attempts (agent_loop continue, retry-from-turn) add theirs. */
export type RunTrigger = 'start' | 'retry' | 'resume' | (string & {});

export interface AttemptOptions {
  trigger: RunTrigger;
  /** The run this attempt continues from: its workspace is reused and checkpoint context recorded. */
  resumeFrom?: TaskRunEntity | null;
  reason?: string;
  /** Carried in the checkpoint for the executor (requires resumeFrom). */
  input?: Record<string, unknown>;
  /** The request (or job) that asked for the attempt: recorded on the run and its events. */
  origin: RequestOrigin | null;
}

/**
 * Run lifecycle on the api side (docs/api.md §4): start, retry, resume, cancel, approval resolution. Each
 * writes the state change and its events in one transaction, then enqueues / signals after commit.
 */
@Injectable()
export class RunLifecycleService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly runs: TaskRunRepository,
    private readonly steps: TaskStepRepository,
    private readonly events: EventStore,
    private readonly approvals: ApprovalsService,
    private readonly registry: ExecutorRegistry,
    private readonly workspaces: WorkspaceService,
    private readonly enqueuer: RunEnqueuer,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

  async start(tenantId: string, taskId: string, origin: RequestOrigin | null) {
    return toRunResponse(await this.createAttempt(tenantId, taskId, { trigger: 'start', origin }));
  }

  async retry(tenantId: string, taskId: string, runId: string, reason: string, origin: RequestOrigin | null) {
    await this.terminalSource(tenantId, taskId, runId);
    return toRunResponse(await this.createAttempt(tenantId, taskId, { trigger: 'retry', reason, origin }));
  }

  /** New run reusing the source run's workspace, with checkpoint context (docs/api.md §4 "Resume semantics"). */
  async resume(tenantId: string, taskId: string, runId: string, reason: string, origin: RequestOrigin | null) {
    const source = await this.terminalSource(tenantId, taskId, runId);
    return toRunResponse(await this.createAttempt(tenantId, taskId, { trigger: 'resume', resumeFrom: source, reason, origin }));
  }

  /** The terminal source run of a new attempt (404 unknown, 409 still active). */
  async terminalSource(tenantId: string, taskId: string, runId: string): Promise<TaskRunEntity> {
    const source = await this.runs.find(tenantId, taskId, runId);
    if (!source) throw new RunNotFoundError(runId);
    if (!isTerminal(source.status)) throw new RunTransitionError(runId, source.status, 'a new attempt (the run is still active)');
    return source;
  }

  /**
   * Creates a run (queued, or awaiting_approval when a policy gates it) with its events in one
   * transaction, then enqueues it. One active run per task (409). The entry point for every attempt.
   */
  async createAttempt(tenantId: string, taskId: string, options: AttemptOptions): Promise<TaskRunEntity> {
    const { trigger } = options;
    const source = options.resumeFrom ?? null;
    const reason = options.reason ?? '';
    const task = await this.tasks.find(tenantId, taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    const executor = this.registry.get(task.executionKind);
    if (!executor) throw new ExecutionKindUnavailableError(task.executionKind, this.registry.kinds());
    await executor.preflight?.(task);
    const runId = newId('run');
    const workspacePath = this.workspaces.plannedPath(task, runId, source?.workspacePath);
    const gate = this.approvals.preExecutionGate(task.executionKind, task.sandboxNetwork);
    let checkpoint: RunCheckpoint | null = null;
    if (source) {
      const lastStep = await this.steps.lastCompleted(tenantId, source.id);
      checkpoint = {
        source_run_id: source.id,
        last_completed_step_id: lastStep?.id ?? null,
        last_completed_step_index: lastStep?.index ?? null,
        last_event_sequence: await this.events.lastSequence(tenantId, source.id),
        reason,
        ...(options.input ? { input: options.input } : {}),
      };
    }
    const { origin } = options;
    let run: TaskRunEntity;
    try {
      run = await this.events.transaction(async (tx) => {
        const locked = await this.tasks.lock(tx.manager, tenantId, taskId);
        if (!locked) throw new TaskNotFoundError(taskId);
        const active = await this.runs.active(tx.manager, tenantId, taskId);
        if (active) throw new TaskBusyError(taskId, active.id, active.status);
        const status: RunStatus = gate ? 'awaiting_approval' : 'queued';
        const now = new Date();
        const row: TaskRunEntity = {
          id: runId,
          tenantId,
          taskId,
          number: await this.runs.nextNumber(tx.manager, taskId),
          status,
          executionKind: task.executionKind,
          workspaceMode: task.workspaceMode,
          workspacePath,
          model: '',
          provider: '',
          providerKind: '',
          totalCostMicrosUsd: 0,
          priorCostMicrosUsd: source ? Number(source.priorCostMicrosUsd) + Number(source.totalCostMicrosUsd) : 0,
          lastError: '',
          errorKind: '',
          resumedFromRunId: source?.id ?? null,
          resumeReason: reason,
          checkpoint,
          attempts: 0,
          leaseOwner: null,
          leaseToken: null,
          leaseExpiresAt: null,
          requestId: origin?.requestId ?? null,
          traceId: origin?.traceId ?? null,
          queuedAt: gate ? null : now,
          enqueuedAt: null,
          startedAt: null,
          finishedAt: null,
          createdAt: now,
          updatedAt: now,
        };
        await this.runs.insert(tx.manager, row);
        await this.tasks.setStatus(tx.manager, { tenantId, id: taskId, status, latestRunId: runId, lastError: '' });
        const emit = (type: string, data: Record<string, unknown>) => tx.emit({ tenantId, runId, taskId, type, data });
        await emit('run.created', { number: row.number, execution_kind: task.executionKind, trigger, workspace_path: workspacePath });
        if (source && checkpoint) {
          await emit('run.resumed_from_event', {
            from_run_id: source.id,
            from_sequence: checkpoint.last_event_sequence,
            reason,
            prior_cost_micros_usd: row.priorCostMicrosUsd,
          });
        }
        if (gate) {
          const plan = executor.plan(task, workspacePath);
          const approval = await this.approvals.create(tx.manager, {
            tenantId,
            taskId,
            runId,
            kind: gate.kind,
            reason: `${gate.policies.join(', ')} polic${gate.policies.length > 1 ? 'ies require' : 'y requires'} approval before this ${task.executionKind} run`,
            actionSummary: plan.summary,
            details: plan.details,
            identity: plan.identity,
            requestedBy: 'policy',
          });
          await emit('run.awaiting_approval', { approval_id: approval.id, kind: gate.kind });
          await emit('approval.requested', {
            approval_id: approval.id,
            kind: gate.kind,
            status: 'pending',
            policy_reason: approval.reason,
            action_summary: approval.actionSummary,
          });
        } else {
          await emit('run.queued', { trigger, resume: trigger === 'resume' });
        }
        return row;
      }, origin);
    } catch (err) {
      if (isUniqueViolation(err)) {
        const active = await this.runs.active(undefined, tenantId, taskId);
        throw new TaskBusyError(taskId, active?.id ?? '', active?.status ?? 'active');
      }
      throw err;
    }
    if (run.status === 'queued') await this.enqueuer.enqueue(run, task.priority);
    return run;
  }

  /**
   * Cancel: commits `cancelled` (with pending approvals and running steps closed) before anything else,
   * then rings the worker that runs it. A terminal run answers 409.
   */
  async cancel(tenantId: string, taskId: string, runId: string, reason: string, origin: RequestOrigin | null) {
    const run = await this.events.transaction(async (tx) => {
      const current = await this.lockRun(tx.manager, tenantId, taskId, runId);
      assertTransition(runId, current.status, 'cancelled');
      await this.runs.transition(tx.manager, {
        tenantId,
        runId,
        from: sourcesOf('cancelled'),
        set: {
          status: 'cancelled',
          finishedAt: () => 'now()',
          lastError: reason || 'cancelled',
          errorKind: 'cancelled',
        },
        releaseLease: true,
      });
      await this.closeRunDependents(tx, current, 'run cancelled');
      await this.tasks.setStatus(tx.manager, { tenantId, id: taskId, status: 'cancelled', lastError: reason || 'cancelled', finished: true });
      await tx.emit({ tenantId, runId, taskId, type: 'run.cancelled', data: { reason: reason || 'cancelled by operator', prior_status: current.status } });
      return (await this.runs.findById(tenantId, runId, tx.manager))!;
    }, origin);
    this.cancelled(run);
    this.bus
      .send(busChannels.runCancel.of(runId), { runId })
      .catch((err: unknown) => rootLogger().warn({ run_id: runId, err: String(err) }, 'cancel signal not published; the worker notices at its next heartbeat'));
    return toRunResponse(run);
  }

  private async closeRunDependents(tx: EventTx, run: TaskRunEntity, note: string): Promise<void> {
    const base = { tenantId: run.tenantId, runId: run.id, taskId: run.taskId };
    for (const approval of await this.approvals.cancelPendingForRun(tx.manager, run.tenantId, run.id, note)) {
      await tx.emit({
        ...base,
        type: 'approval.resolved',
        data: { approval_id: approval.id, kind: approval.kind, status: 'cancelled', decision: null, by: 'system', comment: note },
      });
    }
    for (const step of await this.steps.cancelRunning(tx.manager, run.tenantId, run.id)) {
      await tx.emit({
        ...base,
        type: 'tool.cancelled',
        data: { tool_call_id: step.id, tool_name: step.toolName, kind: step.kind, step_id: step.id, reason: 'run_cancelled' },
      });
    }
  }

  private async lockRun(manager: EntityManager, tenantId: string, taskId: string, runId: string): Promise<TaskRunEntity> {
    const run = await this.runs.lock(manager, tenantId, runId);
    if (!run || run.taskId !== taskId) throw new RunNotFoundError(runId);
    return run;
  }

  /** Approve requeues the same run; reject cancels it; a no-longer-pending approval is 409. */
  async resolveApproval(
    tenantId: string,
    taskId: string,
    approvalId: string,
    decision: 'approve' | 'reject',
    note: string,
    by: string,
    origin: RequestOrigin | null,
  ) {
    const task = await this.tasks.find(tenantId, taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    const { approval, run } = await this.events.transaction(async (tx) => {
      const pending = await this.approvals.get(tenantId, taskId, approvalId, tx.manager);
      const current = await this.lockRun(tx.manager, tenantId, taskId, pending.runId);
      const resolved = await this.approvals.resolve(tx.manager, { tenantId, taskId, id: approvalId, decision, note, resolvedBy: by });
      const base = { tenantId, runId: current.id, taskId };
      await tx.emit({
        ...base,
        type: 'approval.resolved',
        data: { approval_id: resolved.id, kind: resolved.kind, decision, status: resolved.status, by, comment: note, scope: 'once' },
      });
      if (resolved.kind === 'agent_loop_tool_call' && current.status !== 'awaiting_approval') return { approval: resolved, run: current };
      if (decision === 'approve') {
        assertTransition(current.id, current.status, 'queued');
        await this.runs.transition(tx.manager, {
          tenantId,
          runId: current.id,
          from: ['awaiting_approval'],
          set: { status: 'queued', queuedAt: () => 'now()', enqueuedAt: null },
        });
        await this.tasks.setStatus(tx.manager, { tenantId, id: taskId, status: 'queued' });
        await tx.emit({ ...base, type: 'run.queued', data: { trigger: 'approval', approval_id: resolved.id } });
      } else {
        assertTransition(current.id, current.status, 'cancelled');
        await this.runs.transition(tx.manager, {
          tenantId,
          runId: current.id,
          from: ['awaiting_approval'],
          set: { status: 'cancelled', finishedAt: () => 'now()', lastError: 'approval rejected', errorKind: 'approval_rejected' },
        });
        await this.tasks.setStatus(tx.manager, { tenantId, id: taskId, status: 'cancelled', lastError: 'approval rejected', finished: true });
        await tx.emit({ ...base, type: 'run.cancelled', data: { reason: 'approval rejected', approval_id: resolved.id, prior_status: current.status } });
      }
      return { approval: resolved, run: (await this.runs.findById(tenantId, current.id, tx.manager))! };
    }, origin);
    if (decision === 'approve' && run.status === 'queued') await this.enqueuer.enqueue(run, task.priority);
    if (decision === 'reject' && run.status === 'cancelled') this.cancelled(run);
    return toApprovalResponse(approval);
  }

  /** A run the api cancelled (the worker records the runs it finishes). */
  private cancelled(run: TaskRunEntity): void {
    const since = (run.startedAt ?? run.createdAt).getTime();
    this.metrics.runFinished(run.executionKind, 'cancelled', (Date.now() - since) / 1000);
  }
}
