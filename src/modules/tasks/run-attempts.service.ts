import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { isUniqueViolation } from '@core/database/database.errors';
import { ApprovalsService } from '@modules/approvals';
import { EventStore, EventTx } from '@modules/events';
import { WorkspaceService } from '@modules/workspaces';
import { ExecutorRegistry } from './executor-registry.service';
import { RunEnqueuer } from './run-enqueuer.service';
import type { RunExecutor } from './run-executor';
import { isTerminal, RunStatus } from './run-status';
import { toRunResponse } from './task-run.dto';
import { RunCheckpoint, TaskRunEntity } from './task-run.entity';
import { newId } from './task-ids';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepRepository } from './task-step.repository';
import { TaskEntity } from './task.entity';
import { TaskRepository } from './task.repository';
import { ExecutionKindUnavailableError, RunNotFoundError, RunTransitionError, TaskBusyError, TaskNotFoundError } from './tasks.errors';

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
  /** Only a task's first run: a task already started answers with its latest run and starts nothing. */
  firstOnly?: boolean;
  /** The schedule fire that asked for the run: announced by a `schedule.fired` event in the run's creation. */
  schedule?: ScheduleFire;
}

/** A schedule's fire as a run records it (docs/schedules.md). */
export interface ScheduleFire {
  schedule_id: string;
  firing_id: string;
  scheduled_for: string;
}

type PreExecutionGate = NonNullable<ReturnType<ApprovalsService['preExecutionGate']>>;

/** What an attempt was planned with before its transaction opens. */
interface PlannedAttempt {
  task: TaskEntity;
  executor: RunExecutor;
  runId: string;
  workspacePath: string;
  gate: PreExecutionGate | null;
  source: TaskRunEntity | null;
  checkpoint: RunCheckpoint | null;
  reason: string;
}

/**
 * New attempts of a task on the api side (docs/api.md §4): start, retry, resume and the executors' own attempts.
 * Each writes the run and its events in one transaction, then enqueues it after commit.
 */
@Injectable()
export class RunAttemptsService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly runs: TaskRunRepository,
    private readonly steps: TaskStepRepository,
    private readonly events: EventStore,
    private readonly approvals: ApprovalsService,
    private readonly registry: ExecutorRegistry,
    private readonly workspaces: WorkspaceService,
    private readonly enqueuer: RunEnqueuer,
  ) {}

  async start(tenantId: string, taskId: string, origin: RequestOrigin | null) {
    return toRunResponse(await this.createAttempt(tenantId, taskId, { trigger: 'start', origin }));
  }

  /** The task's first run, started at most once whoever asks how often: a started task answers with its latest run. */
  async startFirst(tenantId: string, taskId: string, origin: RequestOrigin | null, schedule?: ScheduleFire) {
    return toRunResponse(await this.createAttempt(tenantId, taskId, { trigger: 'start', origin, firstOnly: true, schedule }));
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
    const planned = await this.plan(tenantId, taskId, options);
    let run: TaskRunEntity;
    try {
      run = await this.events.transaction((tx) => this.insertAttempt(tx, planned, options), options.origin);
    } catch (err) {
      if (isUniqueViolation(err)) {
        const active = await this.runs.active(undefined, tenantId, taskId);
        throw new TaskBusyError(taskId, active?.id ?? '', active?.status ?? 'active');
      }
      throw err;
    }
    if (run.status === 'queued') await this.enqueuer.enqueue(run, planned.task.priority);
    return run;
  }

  /** Everything an attempt is decided by before its transaction: the task, its executor, workspace, gate and checkpoint. */
  private async plan(tenantId: string, taskId: string, options: AttemptOptions): Promise<PlannedAttempt> {
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
    const checkpoint = source ? await this.checkpointOf(source, reason, options.input) : null;
    return { task, executor, runId, workspacePath, gate, source, checkpoint, reason };
  }

  private async checkpointOf(source: TaskRunEntity, reason: string, input: Record<string, unknown> | undefined): Promise<RunCheckpoint> {
    const lastStep = await this.steps.lastCompleted(source.tenantId, source.id);
    return {
      source_run_id: source.id,
      last_completed_step_id: lastStep?.id ?? null,
      last_completed_step_index: lastStep?.index ?? null,
      last_event_sequence: await this.events.lastSequence(source.tenantId, source.id),
      reason,
      ...(input ? { input } : {}),
    };
  }

  /** Inside the transaction: the task locked, no other active run, the row and its events written. */
  private async insertAttempt(tx: EventTx, planned: PlannedAttempt, options: AttemptOptions): Promise<TaskRunEntity> {
    const { task, runId, workspacePath, gate, source, checkpoint, reason } = planned;
    const { tenantId, id: taskId } = task;
    const { trigger } = options;
    const locked = await this.tasks.lock(tx.manager, tenantId, taskId);
    if (!locked) throw new TaskNotFoundError(taskId);
    if (options.firstOnly && locked.latestRunId) {
      const latest = await this.runs.find(tenantId, taskId, locked.latestRunId, tx.manager);
      if (latest) return latest;
    }
    const active = await this.runs.active(tx.manager, tenantId, taskId);
    if (active) throw new TaskBusyError(taskId, active.id, active.status);
    const status: RunStatus = gate ? 'awaiting_approval' : 'queued';
    const row = newRunRow(planned, status, await this.runs.nextNumber(tx.manager, taskId), options);
    await this.runs.insert(tx.manager, row);
    await this.tasks.setStatus(tx.manager, { tenantId, id: taskId, status, latestRunId: runId, lastError: '' });
    const emit = (type: string, data: Record<string, unknown>) => tx.emit({ tenantId, runId, taskId, type, data });
    await emit('run.created', { number: row.number, execution_kind: task.executionKind, trigger, workspace_path: workspacePath });
    // In the run's creating transaction: one event per fire, however often the fire is taken over.
    if (options.schedule) await emit('schedule.fired', { ...options.schedule });
    if (source && checkpoint) {
      await emit('run.resumed_from_event', {
        from_run_id: source.id,
        from_sequence: checkpoint.last_event_sequence,
        reason,
        prior_cost_micros_usd: row.priorCostMicrosUsd,
      });
    }
    if (gate) await this.requestApproval(tx, planned, gate, emit);
    else await emit('run.queued', { trigger, resume: trigger === 'resume' });
    return row;
  }

  /** A policy gates the run: the approval it waits for, and its events. */
  private async requestApproval(
    tx: EventTx,
    planned: PlannedAttempt,
    gate: PreExecutionGate,
    emit: (type: string, data: Record<string, unknown>) => Promise<unknown>,
  ): Promise<void> {
    const { task, runId, workspacePath } = planned;
    const plan = planned.executor.plan(task, workspacePath);
    const approval = await this.approvals.create(tx.manager, {
      tenantId: task.tenantId,
      taskId: task.id,
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
  }
}

/** The new run's row: queued now, or waiting for its approval (queued_at set when approved). */
function newRunRow(planned: PlannedAttempt, status: RunStatus, number: number, options: AttemptOptions): TaskRunEntity {
  const { task, runId, workspacePath, gate, source, checkpoint, reason } = planned;
  const { origin } = options;
  const now = new Date();
  return {
    id: runId,
    tenantId: task.tenantId,
    taskId: task.id,
    number,
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
}
