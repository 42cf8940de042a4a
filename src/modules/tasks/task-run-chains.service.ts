import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { RunLifecycleService, type RunTrigger } from './run-lifecycle.service';
import { RunQueriesService } from './run-queries.service';
import { toRunResponse } from './task-run.dto';
import { TasksService } from './tasks.service';

export type RunResponse = ReturnType<typeof toRunResponse>;

/**
 * What other modules (the agent loop's continue / retry-from-turn and its live stream) need of a task's run chain,
 * in plain shapes: no entity leaves the tasks module (STYLE rule 14).
 */
@Injectable()
export class TaskRunChainsService {
  constructor(
    private readonly tasks: TasksService,
    private readonly lifecycle: RunLifecycleService,
    private readonly queries: RunQueriesService,
  ) {}

  /** The task's execution kind (404 for another tenant's or an unknown task). */
  async executionKind(tenantId: string, taskId: string): Promise<string> {
    return (await this.tasks.require(tenantId, taskId)).executionKind;
  }

  /** The run as the API shows it (404 when unknown). */
  getRun(tenantId: string, taskId: string, runId: string): Promise<RunResponse> {
    return this.queries.getRun(tenantId, taskId, runId);
  }

  /** The newest artifact of `kind` of a terminal run (409 while it is active, 404 when unknown), or null. */
  async terminalRunArtifact(tenantId: string, taskId: string, runId: string, kind: string): Promise<string | null> {
    const source = await this.lifecycle.terminalSource(tenantId, taskId, runId);
    return this.queries.latestArtifactContent(tenantId, source.id, kind);
  }

  /** A new run of the chain starting from a terminal run (its workspace reused, its cost carried), with executor input. */
  async attemptFrom(
    tenantId: string,
    taskId: string,
    runId: string,
    options: { trigger: RunTrigger; reason: string; input: Record<string, unknown>; origin: RequestOrigin | null },
  ): Promise<RunResponse> {
    const source = await this.lifecycle.terminalSource(tenantId, taskId, runId);
    return toRunResponse(await this.lifecycle.createAttempt(tenantId, taskId, { ...options, resumeFrom: source }));
  }
}
