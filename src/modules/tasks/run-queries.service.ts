import { Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import type { RequestOrigin } from '@core/context/request-context';
import { ApprovalsService } from '@modules/approvals';
import { toApprovalResponse } from '@modules/approvals';
import { EventStore } from '@modules/events';
import { AppendRunEventDto, toArtifactResponse, toPatchResponse, toRunResponse, toStepResponse } from './task-run.dto';
import type { TaskRunEntity } from './task-run.entity';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepRepository } from './task-step.repository';
import { TaskRepository } from './task.repository';
import { ArtifactNotFoundError, RunNotFoundError, StepNotFoundError, TaskNotFoundError } from './tasks.errors';

const MAX_EVENT_PAGE = 500;

/** Read side of runs (docs/api.md §4 "Execution detail endpoints"), per-run events and `external.event`. */
@Injectable()
export class RunQueriesService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly runs: TaskRunRepository,
    private readonly steps: TaskStepRepository,
    private readonly artifacts: TaskArtifactRepository,
    private readonly approvals: ApprovalsService,
    private readonly events: EventStore,
  ) {}

  /** The run, checked to belong to the tenant's task (else 404). */
  async requireRun(tenantId: string, taskId: string, runId: string): Promise<TaskRunEntity> {
    const run = await this.runs.find(tenantId, taskId, runId);
    if (run) return run;
    if (!(await this.tasks.find(tenantId, taskId))) throw new TaskNotFoundError(taskId);
    throw new RunNotFoundError(runId);
  }

  async listRuns(tenantId: string, taskId: string) {
    if (!(await this.tasks.find(tenantId, taskId))) throw new TaskNotFoundError(taskId);
    return (await this.runs.list(tenantId, taskId)).map(toRunResponse);
  }

  async getRun(tenantId: string, taskId: string, runId: string) {
    return toRunResponse(await this.requireRun(tenantId, taskId, runId));
  }

  async listSteps(tenantId: string, taskId: string, runId: string) {
    await this.requireRun(tenantId, taskId, runId);
    return (await this.steps.listForRun(tenantId, runId)).map(toStepResponse);
  }

  async getStep(tenantId: string, taskId: string, runId: string, stepId: string) {
    await this.requireRun(tenantId, taskId, runId);
    const step = await this.steps.find(tenantId, runId, stepId);
    if (!step) throw new StepNotFoundError(stepId);
    return toStepResponse(step);
  }

  async listArtifacts(tenantId: string, taskId: string, runId: string) {
    await this.requireRun(tenantId, taskId, runId);
    return (await this.artifacts.listForRun(tenantId, runId)).map(toArtifactResponse);
  }

  async getArtifact(tenantId: string, taskId: string, runId: string, artifactId: string) {
    await this.requireRun(tenantId, taskId, runId);
    const artifact = await this.artifacts.find(tenantId, runId, artifactId);
    if (!artifact) throw new ArtifactNotFoundError(artifactId);
    return toArtifactResponse(artifact);
  }

  /** The newest artifact of `kind` of a run, with its content (null when there is none). */
  async latestArtifact(tenantId: string, runId: string, kind: string): Promise<{ content: string; metadata: Record<string, unknown> } | null> {
    const a = await this.artifacts.latestOfKind(tenantId, runId, kind);
    return a ? { content: a.contentText, metadata: a.metadata ?? {} } : null;
  }

  async latestArtifactContent(tenantId: string, runId: string, kind: string): Promise<string | null> {
    return (await this.artifacts.latestOfKind(tenantId, runId, kind))?.contentText ?? null;
  }

  async listTaskArtifacts(tenantId: string, taskId: string) {
    if (!(await this.tasks.find(tenantId, taskId))) throw new TaskNotFoundError(taskId);
    return (await this.artifacts.listForTask(tenantId, taskId)).map(toArtifactResponse);
  }

  async listPatches(tenantId: string, taskId: string, runId: string) {
    await this.requireRun(tenantId, taskId, runId);
    return (await this.artifacts.listForRun(tenantId, runId, { kind: 'patch', withContent: true })).map(toPatchResponse);
  }

  async getPatch(tenantId: string, taskId: string, runId: string, artifactId: string) {
    await this.requireRun(tenantId, taskId, runId);
    const artifact = await this.artifacts.find(tenantId, runId, artifactId);
    if (!artifact || artifact.kind !== 'patch') throw new ArtifactNotFoundError(artifactId);
    return toPatchResponse(artifact);
  }

  /** The run's approvals as records (request and resolution times). */
  listRunApprovals(tenantId: string, runId: string) {
    return this.approvals.listForRun(tenantId, runId);
  }

  async listApprovals(tenantId: string, taskId: string) {
    if (!(await this.tasks.find(tenantId, taskId))) throw new TaskNotFoundError(taskId);
    return (await this.approvals.listForTask(tenantId, taskId)).map(toApprovalResponse);
  }

  async getApproval(tenantId: string, taskId: string, approvalId: string) {
    if (!(await this.tasks.find(tenantId, taskId))) throw new TaskNotFoundError(taskId);
    return toApprovalResponse(await this.approvals.get(tenantId, taskId, approvalId));
  }

  async listEvents(tenantId: string, taskId: string, runId: string, afterSequence: number, limit: number): Promise<EventEnvelope[]> {
    await this.requireRun(tenantId, taskId, runId);
    return this.events.listRun({ tenantId, runId, afterSequence, limit: Math.min(Math.max(limit, 1), MAX_EVENT_PAGE) });
  }

  /** `POST …/events`: a caller-posted `external.event` on the run's stream. */
  async appendExternal(tenantId: string, taskId: string, runId: string, dto: AppendRunEventDto, origin: RequestOrigin | null): Promise<EventEnvelope> {
    await this.requireRun(tenantId, taskId, runId);
    return this.events.transaction(
      (tx) =>
        tx.emit({
          tenantId,
          runId,
          taskId,
          type: 'external.event',
          data: { step_id: dto.step_id, status: dto.status, note: dto.note, data: dto.data ?? {} },
        }),
      origin,
    );
  }
}
