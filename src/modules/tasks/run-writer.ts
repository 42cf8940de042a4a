import { Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import type { RequestOrigin } from '@core/context/request-context';
import { storableText, storableValue } from '@core/database/storable';
import { artifactRow, RunStorageBudget, StorageLimitError } from './run-storage';
import { AppConfig } from '@core/config/app-config';
import type { TasksConfig } from '@core/config/groups/tasks.env';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { ApprovalsService } from '@modules/approvals';
import type { ApprovalKind, ApprovalRecord } from '@modules/approvals';
import { EventStore, EventTx, type SqlFragment } from '@modules/events';
import { isTransientDbError, retryTransient } from './transient-errors';
import { TaskArtifactEntity } from './task-artifact.entity';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunRepository } from './task-run.repository';
import { finishStepSql, insertArtifactSql, insertStepSql, usageGuardSql } from './run-step-sql';
import type { TaskStepEntity } from './task-step.entity';
import { STEP_PHASE_HANDED_OVER, STEP_PHASE_RERUN_AFTER_CRASH, TaskStepRepository } from './task-step.repository';
import { TaskRepository } from './task.repository';
import { dispatchEvents, newStepRow, type NewArtifact, outcomeOf, type RunUsage, STEP_STATUS, type StepOutcome, type StepSpec, TOOL_EVENT } from './run-step';

export type { NewArtifact, RunUsage, StepOutcome, StepOutcomeStatus, StepSpec } from './run-step';
export { StorageLimitError } from './run-storage';

/** The lease was taken over, or the run was cancelled: the writer must stop without writing. */
export class LeaseLostError extends Error {
  constructor(runId: string) {
    super(`lease of run ${runId} lost (taken over or run no longer running)`);
    this.name = 'LeaseLostError';
  }
}

export interface RunRef {
  tenantId: string;
  taskId: string;
  runId: string;
  token: string;
  /** The job executing the run: recorded on the events it writes. */
  origin: RequestOrigin;
  /** The run's execution kind and when it started (its first attempt): the run metrics' labels and duration. */
  kind: string;
  startedAt: Date | null;
}

/**
 * Every write a worker makes for a run, each one a transaction that starts by proving the lease token
 * (docs/design.md §4.4): a worker whose lease was taken over cannot write steps, events, artifacts or the result.
 * Transient database errors (terminated connections) are retried.
 */
export class RunWriter {
  private haltReason: string | undefined;
  /** Steps an earlier attempt of this run left behind, by index (loaded once per attempt). */
  private prior: Promise<Map<number, TaskStepEntity>> | undefined;
  /** A step whose dispatch record committed with the previous step's result (StepOutcome.next), not run yet. */
  private dispatched: { step: TaskStepEntity; spec: StepSpec } | undefined;
  private budget: RunStorageBudget | undefined;

  constructor(
    private readonly deps: RunWriterDeps,
    readonly ref: RunRef,
  ) {}

  /** Stops all further writes (lease lost, worker shutting down): they throw LeaseLostError. */
  halt(reason: string): void {
    this.haltReason ??= reason;
  }

  /** A guarded transaction; events emitted in it are published after commit. */
  async tx<T>(fn: (tx: EventTx) => Promise<T>): Promise<T> {
    if (this.haltReason) throw new LeaseLostError(this.ref.runId);
    return retryTransient(() =>
      this.deps.events.transaction(async (tx) => {
        if (!(await this.deps.runs.guard(tx.manager, this.ref.runId, this.ref.token))) throw new LeaseLostError(this.ref.runId);
        return fn(tx);
      }, this.ref.origin),
    );
  }

  emitIn(tx: EventTx, type: string, data: Record<string, unknown>): Promise<EventEnvelope> {
    return tx.emit({ tenantId: this.ref.tenantId, runId: this.ref.runId, taskId: this.ref.taskId, type, data });
  }

  /** Several events of this run in one statement, in order. */
  emitManyIn(tx: EventTx, events: { type: string; data: Record<string, unknown> }[]): Promise<EventEnvelope[]> {
    return tx.emitMany({ tenantId: this.ref.tenantId, runId: this.ref.runId, taskId: this.ref.taskId }, events);
  }

  emit(type: string, data: Record<string, unknown>): Promise<EventEnvelope> {
    return this.tx((tx) => this.emitIn(tx, type, data));
  }

  /** Writes an artifact in the caller's transaction; returns its id. */
  async addArtifactIn(tx: EventTx, a: NewArtifact): Promise<{ id: string }> {
    const row = this.artifactRow(a);
    await this.reserve(row.sizeBytes);
    await this.deps.artifacts.insert(tx.manager, row);
    return { id: row.id };
  }

  private artifactRow(a: NewArtifact): TaskArtifactEntity {
    return artifactRow(this.ref, a, this.deps.storage.maxArtifactBytes);
  }

  /** Counts `bytes` against the run's storage cap, or throws StorageLimitError (nothing of the write is stored then). */
  private reserve(bytes: number): Promise<void> {
    this.budget ??= new RunStorageBudget(this.deps.storage.maxRunStoredBytes, () => this.deps.artifacts.storedBytes(this.ref.tenantId, this.ref.runId));
    return this.budget.reserve(bytes);
  }

  /**
   * A step's write as one statement that commits on its own (EventStore.appendGuarded): the lease guard (which also
   * records `usage` on the run), `writes`, and `events`: one round trip instead of a transaction's five or more.
   */
  private async stepWrite(writes: SqlFragment[], events: { type: string; data: Record<string, unknown> }[], usage?: RunUsage): Promise<void> {
    if (this.haltReason) throw new LeaseLostError(this.ref.runId);
    const guard = usageGuardSql(this.ref.runId, this.ref.token, usage);
    const written = await retryTransient(() =>
      this.deps.events.appendGuarded(guard, writes, { tenantId: this.ref.tenantId, runId: this.ref.runId, taskId: this.ref.taskId }, events, this.ref.origin),
    );
    if (!written) throw new LeaseLostError(this.ref.runId);
  }

  addArtifact(a: NewArtifact): Promise<{ id: string }> {
    return this.tx((tx) => this.addArtifactIn(tx, a));
  }

  /**
   * An artifact of the run's last state after an operator cancelled it (the cancel released the lease, so the guarded
   * writes refuse): stored only while the run is `cancelled` and nobody holds it — never for a run taken over or
   * handed on. False when refused.
   */
  async addArtifactAfterCancel(a: NewArtifact): Promise<boolean> {
    return retryTransient(() =>
      this.deps.events.transaction(async (tx) => {
        const run = await this.deps.runs.lock(tx.manager, this.ref.tenantId, this.ref.runId);
        if (run?.status !== 'cancelled' || run.leaseToken) return false;
        await this.addArtifactIn(tx, a);
        return true;
      }, this.ref.origin),
    );
  }

  /**
   * Runs one step with a durable dispatch record. A step completed by an earlier attempt is not run
   * again (its outcome is returned). A step an earlier attempt left `running` is never silently repeated, and crashes
   * are counted per step so a call that kills its worker cannot crash-loop (docs/security.md): a side effect is
   * reported failed (`ambiguous_side_effect`); a tool call whose worker died under it fails as `worker_lost`; a model
   * call (no side effect) is made again once, and fails as `worker_lost` when a second worker dies under it. A step a
   * draining worker handed over on a clean shutdown is no crash: it runs again when idempotent.
   */
  async step(
    spec: StepSpec,
    fn: (step: TaskStepEntity, dispatch: { again: boolean }) => Promise<StepOutcome>,
  ): Promise<{ step: TaskStepEntity; outcome: StepOutcome; replayed: boolean }> {
    const ahead = this.dispatched?.step.index === spec.index ? this.dispatched.step : undefined;
    if (ahead) this.dispatched = undefined;
    const existing = ahead ? null : ((await this.priorSteps()).get(spec.index) ?? null);
    if (existing && existing.status !== 'running') {
      return { step: existing, outcome: outcomeOf(existing), replayed: true };
    }
    let step: TaskStepEntity;
    if (existing && !existing.idempotent) {
      const outcome: StepOutcome = {
        status: 'failed',
        errorKind: 'ambiguous_side_effect',
        error: 'the worker running this step was lost; its side effect may or may not have happened, so it is not repeated',
        eventData: { reason: 'worker_lost', ambiguous: true },
      };
      await this.finishStep(existing, spec, outcome, 0);
      return { step: { ...existing, status: 'failed', errorKind: outcome.errorKind!, error: outcome.error! }, outcome, replayed: true };
    }
    const crashes = !existing || existing.phase === STEP_PHASE_HANDED_OVER ? 0 : existing.phase === STEP_PHASE_RERUN_AFTER_CRASH ? 2 : 1;
    if (existing && (crashes > 1 || (crashes === 1 && spec.kind !== 'model'))) {
      const outcome: StepOutcome = {
        status: 'failed',
        errorKind: 'worker_lost',
        error: `the worker running this step (${spec.title}) died while it ran${crashes > 1 ? ', twice' : ''}; it is not run again, so a call that crashes its worker cannot crash-loop`,
        eventData: { reason: 'worker_lost', crashes },
      };
      await this.finishStep(existing, spec, outcome, 0);
      return { step: { ...existing, status: 'failed', errorKind: outcome.errorKind!, error: outcome.error! }, outcome, replayed: true };
    }
    if (ahead) {
      step = ahead;
    } else if (existing) {
      step = existing;
      await this.tx(async (tx) => {
        // Dispatched again, the crash counted in its phase: if this worker dies under it too, the next attempt fails it.
        const phase = crashes > 0 ? STEP_PHASE_RERUN_AFTER_CRASH : 'dispatched';
        await this.deps.steps.update(tx.manager, step.id, { startedAt: () => 'now()', phase });
        await this.emitIn(tx, 'tool.started', { tool_call_id: step.id, tool_name: spec.toolName, kind: spec.kind, step_id: step.id, retry: true, crashes });
      });
    } else {
      step = newStepRow(this.ref, spec);
      await this.stepWrite([insertStepSql(step)], dispatchEvents(step, spec));
    }
    const started = Date.now();
    // `again`: an earlier attempt dispatched this step (a crash or a hand-over cut it): what it streamed may be on the live stream.
    const outcome = await fn(step, { again: existing !== null });
    await this.finishStep(step, spec, outcome, Date.now() - started);
    this.deps.metrics.stepFinished(spec.kind, STEP_STATUS[outcome.status], (Date.now() - started) / 1000);
    return { step: { ...step, status: STEP_STATUS[outcome.status] }, outcome, replayed: false };
  }

  private priorSteps(): Promise<Map<number, TaskStepEntity>> {
    this.prior ??= retryTransient(() => this.deps.steps.listForRun(this.ref.tenantId, this.ref.runId)).then((rows) => new Map(rows.map((s) => [s.index, s])));
    return this.prior;
  }

  /** Whether the step with this index has its dispatch record already (written with the previous step's result). */
  isDispatched(index: number): boolean {
    return this.dispatched?.step.index === index;
  }

  private async finishStep(step: TaskStepEntity, spec: StepSpec, outcome: StepOutcome, durationMs: number, capped = true): Promise<void> {
    let artifacts: TaskArtifactEntity[];
    try {
      artifacts = (outcome.artifacts ?? []).map((a) => this.artifactRow({ ...a, stepId: step.id }));
      if (capped) await this.reserve(artifacts.reduce((n, a) => n + Number(a.sizeBytes), 0) + Buffer.byteLength(outcome.result ?? ''));
    } catch (err) {
      if (!(err instanceof StorageLimitError)) throw err;
      // Nothing of the step's result is stored: the step fails with the reason (its spend still counts), then the run.
      await this.finishStep(step, spec, { status: 'failed', error: err.message, errorKind: err.kind, usage: outcome.usage }, durationMs, false);
      throw err;
    }
    const writes: SqlFragment[] = [finishStepSql(step.id, outcome), ...artifacts.map((a) => insertArtifactSql(a))];
    // The next step's dispatch record, unless an earlier attempt left a step at its index (then step() handles that one).
    const nextSpec = outcome.next && !(await this.priorSteps()).has(outcome.next.index) ? outcome.next : undefined;
    const next = nextSpec ? newStepRow(this.ref, nextSpec) : undefined;
    if (next) writes.push(insertStepSql(next));
    await this.stepWrite(
      writes,
      [
        ...(outcome.events ?? []),
        {
          type: TOOL_EVENT[outcome.status],
          data: {
            tool_call_id: step.id,
            tool_name: spec.toolName,
            kind: spec.kind,
            step_id: step.id,
            duration_ms: durationMs,
            ...(outcome.error ? { error: outcome.error, error_kind: outcome.errorKind } : {}),
            ...(outcome.exitCode !== undefined && outcome.exitCode !== null ? { exit_code: outcome.exitCode } : {}),
            ...(outcome.eventData ?? {}),
          },
        },
        ...(next ? dispatchEvents(next, nextSpec!) : []),
      ],
      outcome.usage,
    );
    if (next) this.dispatched = { step: next, spec: nextSpec! };
  }

  /** Terminal result of the run (running → completed | failed), with the task mirrored. */
  async finish(result: { status: 'completed' | 'failed'; error?: string; errorKind?: string; data?: Record<string, unknown> }): Promise<void> {
    await this.tx(async (tx) => {
      const ok = await this.deps.runs.transition(tx.manager, {
        tenantId: this.ref.tenantId,
        runId: this.ref.runId,
        from: ['running'],
        set: {
          status: result.status,
          lastError: result.error ?? '',
          errorKind: result.errorKind ?? '',
          finishedAt: () => 'now()',
        },
        releaseLease: true,
      });
      if (!ok) throw new LeaseLostError(this.ref.runId);
      await this.closeDispatched(tx);
      await this.deps.tasks.setStatus(tx.manager, {
        tenantId: this.ref.tenantId,
        id: this.ref.taskId,
        status: result.status,
        lastError: result.error ?? '',
        finished: true,
      });
      if (result.status === 'completed') {
        await this.emitIn(tx, 'run.finished', { final_status: 'completed', ...(result.data ?? {}) });
      } else {
        await this.emitIn(tx, 'run.failed', { code: result.errorKind ?? 'failed', message: result.error ?? '', retriable: false, ...(result.data ?? {}) });
      }
    });
    const since = this.ref.startedAt?.getTime() ?? Date.now();
    this.deps.metrics.runFinished(this.ref.kind, result.status, (Date.now() - since) / 1000);
  }

  /** A step dispatched with the previous step's result that the run ended before running (a cancel between steps). */
  private async closeDispatched(tx: EventTx): Promise<void> {
    const ahead = this.dispatched;
    if (!ahead) return;
    this.dispatched = undefined;
    const error = 'not run: the run ended before this step';
    await this.deps.steps.update(tx.manager, ahead.step.id, {
      status: 'cancelled',
      phase: 'finished',
      finishedAt: () => 'now()',
      errorKind: 'cancelled',
      error,
    });
    await this.emitIn(tx, TOOL_EVENT.cancelled, {
      tool_call_id: ahead.step.id,
      tool_name: ahead.spec.toolName,
      kind: ahead.spec.kind,
      step_id: ahead.step.id,
      error,
      error_kind: 'cancelled',
    });
  }

  /**
   * Mid-run gate (agent_loop): opens an approval and moves running → awaiting_approval, giving up the
   * lease. Approving requeues the same run.
   */
  async pauseForApproval(a: {
    kind: ApprovalKind;
    reason: string;
    actionSummary: string[];
    details: Record<string, unknown>;
    stepId?: string | null;
  }): Promise<ApprovalRecord> {
    return this.tx(async (tx) => {
      const approval = await this.deps.approvals.create(tx.manager, {
        tenantId: this.ref.tenantId,
        taskId: this.ref.taskId,
        runId: this.ref.runId,
        stepId: a.stepId,
        kind: a.kind,
        reason: storableText(a.reason),
        actionSummary: storableValue(a.actionSummary),
        details: storableValue(a.details),
        requestedBy: 'runtime',
      });
      const ok = await this.deps.runs.transition(tx.manager, {
        tenantId: this.ref.tenantId,
        runId: this.ref.runId,
        from: ['running'],
        set: { status: 'awaiting_approval' },
        releaseLease: true,
      });
      if (!ok) throw new LeaseLostError(this.ref.runId);
      await this.deps.tasks.setStatus(tx.manager, { tenantId: this.ref.tenantId, id: this.ref.taskId, status: 'awaiting_approval' });
      await this.emitIn(tx, 'run.awaiting_approval', { approval_id: approval.id, kind: a.kind });
      await this.emitIn(tx, 'approval.requested', {
        approval_id: approval.id,
        kind: a.kind,
        status: 'pending',
        policy_reason: a.reason,
        step_id: a.stepId ?? undefined,
      });
      return approval;
    });
  }

  /** The newest artifact of `kind` of this run (or of `runId`, a run of the same task), with its content. */
  async latestArtifact(kind: string, runId = this.ref.runId): Promise<{ id: string; content: string; metadata: Record<string, unknown> } | null> {
    const last = await retryTransient(() => this.deps.artifacts.latestOfKind(this.ref.tenantId, runId, kind));
    return last ? { id: last.id, content: last.contentText, metadata: last.metadata ?? {} } : null;
  }
}

/** Builds RunWriters; one per execution attempt. */
@Injectable()
export class RunWriterDeps {
  constructor(
    readonly events: EventStore,
    readonly runs: TaskRunRepository,
    readonly steps: TaskStepRepository,
    readonly artifacts: TaskArtifactRepository,
    readonly tasks: TaskRepository,
    readonly approvals: ApprovalsService,
    readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  get storage(): TasksConfig['storage'] {
    return this.config.tasks.storage;
  }

  writer(ref: RunRef): RunWriter {
    return new RunWriter(this, ref);
  }
}

export { isTransientDbError };
export const logLeaseLost = (ref: RunRef): void =>
  rootLogger().warn({ run_id: ref.runId, request_id: ref.origin.requestId }, 'lease lost; this worker stops writing for the run');
