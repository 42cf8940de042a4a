import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { busChannels, EventBus } from '@core/bus';
import type { RequestOrigin } from '@core/context/request-context';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { ApprovalsService, toApprovalResponse } from '@modules/approvals';
import { EventStore, EventTx } from '@modules/events';
import { RunEnqueuer } from './run-enqueuer.service';
import { assertTransition, sourcesOf } from './run-status';
import { toRunResponse } from './task-run.dto';
import { TaskRunEntity } from './task-run.entity';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepRepository } from './task-step.repository';
import { TaskRepository } from './task.repository';
import { RunNotFoundError, TaskNotFoundError } from './tasks.errors';

/**
 * What an operator does to a run that exists, on the api side (docs/api.md §4): cancel it, or resolve the approval it
 * waits for. Each writes the state change and its events in one transaction, then enqueues / signals after commit.
 */
@Injectable()
export class RunInterventionsService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly runs: TaskRunRepository,
    private readonly steps: TaskStepRepository,
    private readonly events: EventStore,
    private readonly approvals: ApprovalsService,
    private readonly enqueuer: RunEnqueuer,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

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
