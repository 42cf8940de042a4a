import { Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import type { RequestOrigin } from '@core/context/request-context';
import { RunAttemptsService, type RunTrigger, type ScheduleFire } from './run-attempts.service';
import { RunInterventionsService } from './run-interventions.service';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { isUniqueViolation } from '@core/database/database.errors';
import { TaskRemovalService } from './task-removal.service';
import { RunQueriesService } from './run-queries.service';
import { runTiming, type RunTiming } from './run-timing';
import { type ActivityItem, buildActivity } from './run-activity';
import { type ApprovalResponse, toApprovalResponse } from '@modules/approvals';
import { toRunResponse } from './task-run.dto';
import type { CreateTaskDto, ListTasksQueryDto, toTaskResponse } from './task.dto';
import { type TaskCaller, TasksService } from './tasks.service';

export type RunResponse = ReturnType<typeof toRunResponse>;
export type TaskResponse = ReturnType<typeof toTaskResponse>;

/** A task as another module asks for it (Agent Chat's agent turns): the fields of `POST /hecate/v1/tasks`. */
export type TaskSpec = Pick<
  CreateTaskDto,
  | 'title'
  | 'prompt'
  | 'system_prompt'
  | 'execution_kind'
  | 'working_directory'
  | 'workspace_mode'
  | 'requested_provider'
  | 'requested_model'
  | 'agent_id'
  | 'agent_version'
>;

/**
 * What other modules (the agent loop's continue / retry-from-turn and its live stream, Agent Chat) and the edges (the MCP
 * server's tools) need of tasks and their run chains, in plain shapes: no entity leaves the tasks module (docs/style.md rule 14).
 * The operations of `/hecate/v1/tasks` are the very service calls its controllers make, answered as the routes answer.
 */
@Injectable()
export class TaskRunChainsService {
  constructor(
    private readonly tasks: TasksService,
    private readonly attempts: RunAttemptsService,
    private readonly interventions: RunInterventionsService,
    private readonly removal: TaskRemovalService,
    private readonly queries: RunQueriesService,
  ) {}

  /** `POST /hecate/v1/tasks`. */
  createTask(tenantId: string, dto: CreateTaskDto, caller: TaskCaller): Promise<TaskResponse> {
    return this.tasks.create(tenantId, dto, caller);
  }

  /** `GET /hecate/v1/tasks`. */
  listTasks(tenantId: string, q: ListTasksQueryDto): Promise<TaskResponse[]> {
    return this.tasks.list(tenantId, q);
  }

  /** `POST /hecate/v1/tasks/{task_id}/start`: the task's next run (queued, or awaiting_approval when a policy gates it). */
  startTask(tenantId: string, taskId: string, origin: RequestOrigin | null): Promise<RunResponse> {
    return this.attempts.start(tenantId, taskId, origin);
  }

  /** `GET …/runs/{run_id}/events`: a page of the run's events after `afterSequence`. */
  listRunEvents(tenantId: string, taskId: string, runId: string, afterSequence: number, limit: number): Promise<EventEnvelope[]> {
    return this.queries.listEvents(tenantId, taskId, runId, afterSequence, limit);
  }

  /** `POST /hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve`: approve requeues the run, reject cancels it. */
  resolveApproval(
    tenantId: string,
    taskId: string,
    approvalId: string,
    decision: { decision: 'approve' | 'reject'; note: string; by: string },
    origin: RequestOrigin | null,
  ): Promise<ApprovalResponse> {
    return this.interventions.resolveApproval(tenantId, taskId, approvalId, decision.decision, decision.note, decision.by, origin);
  }

  /** The task's execution kind (404 for another tenant's or an unknown task). */
  async executionKind(tenantId: string, taskId: string): Promise<string> {
    return (await this.tasks.require(tenantId, taskId)).executionKind;
  }

  /** The run as the API shows it (404 when unknown). */
  getRun(tenantId: string, taskId: string, runId: string): Promise<RunResponse> {
    return this.queries.getRun(tenantId, taskId, runId);
  }

  /**
   * Creates a task and starts its first run (validation 400s and the start-time 422 as `POST /hecate/v1/tasks` and
   * `…/start` answer them; a task whose start is refused is removed again).
   */
  async createAndStart(tenantId: string, spec: TaskSpec, caller: TaskCaller, origin: RequestOrigin | null): Promise<RunResponse> {
    const task = await this.tasks.create(tenantId, spec, caller);
    return this.startOrRemove(tenantId, task.id, () => this.attempts.start(tenantId, task.id, origin));
  }

  /**
   * The task `taskId` made from `dto` and started, at most once however often it is asked (a schedule's fire finished by
   * another worker after the first died): a task already there is not created again, a started one not started again.
   */
  async createAndStartOnce(
    tenantId: string,
    taskId: string,
    dto: CreateTaskDto,
    caller: TaskCaller,
    origin: RequestOrigin | null,
    schedule?: ScheduleFire,
  ): Promise<RunResponse> {
    if (!(await this.tasks.exists(tenantId, taskId))) {
      await this.tasks.create(tenantId, dto, caller, taskId).catch((err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
      });
    }
    return this.startOrRemove(tenantId, taskId, () => this.attempts.startFirst(tenantId, taskId, origin, schedule));
  }

  /** The start's run; a task whose start is refused is removed again (the refusal is what the caller gets). */
  private async startOrRemove(tenantId: string, taskId: string, start: () => Promise<RunResponse>): Promise<RunResponse> {
    try {
      return await start();
    } catch (err) {
      await this.removal
        .delete(tenantId, taskId)
        .catch(ignoreFailure('removing a task whose start was refused', 'the refusal is what the caller gets; a leftover task can be deleted'));
      throw err;
    }
  }

  /**
   * The run's story in the compact activity vocabulary Task Detail shows (docs/api.md §1 "Activity rendering": model turns,
   * tool calls, approvals, changed files, final answer, terminal state) and where its time went (docs/api.md §4 `timing`),
   * from one read of its steps, artifacts and approvals.
   */
  async activityAndTiming(tenantId: string, taskId: string, runId: string): Promise<{ activity: ActivityItem[]; timing: RunTiming }> {
    const [run, steps, artifacts, approvals] = await Promise.all([
      this.queries.getRun(tenantId, taskId, runId),
      this.queries.listSteps(tenantId, taskId, runId),
      this.queries.listArtifacts(tenantId, taskId, runId),
      this.queries.listRunApprovals(tenantId, runId),
    ]);
    return { activity: buildActivity(run, steps, artifacts, approvals.map(toApprovalResponse)), timing: runTiming(run, steps, approvals) };
  }

  /** Cancels a queued, running or waiting run (409 when it is already terminal). */
  cancelRun(tenantId: string, taskId: string, runId: string, reason: string, origin: RequestOrigin | null): Promise<RunResponse> {
    return this.interventions.cancel(tenantId, taskId, runId, reason, origin);
  }

  /** The newest artifact of `kind` of a run, whatever its state, or null. */
  runArtifact(tenantId: string, runId: string, kind: string): Promise<string | null> {
    return this.queries.latestArtifactContent(tenantId, runId, kind);
  }

  /** The same with the artifact's metadata. */
  runArtifactWithMetadata(tenantId: string, runId: string, kind: string): Promise<{ content: string; metadata: Record<string, unknown> } | null> {
    return this.queries.latestArtifact(tenantId, runId, kind);
  }

  /** The newest artifact of `kind` of a terminal run (409 while it is active, 404 when unknown), or null. */
  async terminalRunArtifact(tenantId: string, taskId: string, runId: string, kind: string): Promise<string | null> {
    const source = await this.attempts.terminalSource(tenantId, taskId, runId);
    return this.queries.latestArtifactContent(tenantId, source.id, kind);
  }

  /** A new run of the chain starting from a terminal run (its workspace reused, its cost carried), with executor input. */
  async attemptFrom(
    tenantId: string,
    taskId: string,
    runId: string,
    options: { trigger: RunTrigger; reason: string; input: Record<string, unknown>; origin: RequestOrigin | null },
  ): Promise<RunResponse> {
    const source = await this.attempts.terminalSource(tenantId, taskId, runId);
    return toRunResponse(await this.attempts.createAttempt(tenantId, taskId, { ...options, resumeFrom: source }));
  }
}
