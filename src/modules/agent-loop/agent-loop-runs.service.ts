import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import { RunLifecycleService, RunQueriesService, TasksService, toRunResponse } from '@modules/tasks';
import { assistantTurns, parseConversation, type Conversation } from './conversation';

/**
 * `continue` and `retry-from-turn`: new runs of an agent_loop task that start from a terminal run's saved conversation
 * (its workspace reused, its cost carried into `prior_cost_micros_usd`). 400 for other kinds, an empty prompt, a turn
 * out of range or a missing conversation; 409 while the source run is active.
 */
@Injectable()
export class AgentLoopRunsService {
  constructor(
    private readonly tasks: TasksService,
    private readonly lifecycle: RunLifecycleService,
    private readonly queries: RunQueriesService,
  ) {}

  async continue(tenantId: string, taskId: string, runId: string, prompt: string, origin: RequestOrigin | null) {
    await this.agentTask(tenantId, taskId);
    if (!prompt.trim()) throw new InvalidRequestError('prompt is required to continue a run', { details: { field: 'prompt' } });
    const source = await this.lifecycle.terminalSource(tenantId, taskId, runId);
    await this.conversationOf(tenantId, source.id);
    const run = await this.lifecycle.createAttempt(tenantId, taskId, {
      trigger: 'continue',
      resumeFrom: source,
      reason: 'continue',
      input: { continue_prompt: prompt },
      origin,
    });
    return toRunResponse(run);
  }

  async retryFromTurn(tenantId: string, taskId: string, runId: string, turn: number, reason: string, origin: RequestOrigin | null) {
    await this.agentTask(tenantId, taskId);
    const source = await this.lifecycle.terminalSource(tenantId, taskId, runId);
    const conversation = await this.conversationOf(tenantId, source.id);
    const turns = assistantTurns(conversation);
    if (turn < 1 || turn > turns) {
      throw new InvalidRequestError(`turn must be between 1 and ${turns} (the run's assistant turns)`, { details: { field: 'turn', turns } });
    }
    const run = await this.lifecycle.createAttempt(tenantId, taskId, {
      trigger: 'retry_from_turn',
      resumeFrom: source,
      reason,
      input: { retry_from_turn: turn },
      origin,
    });
    return toRunResponse(run);
  }

  private async agentTask(tenantId: string, taskId: string): Promise<void> {
    const task = await this.tasks.get(tenantId, taskId);
    if (task.execution_kind !== 'agent_loop')
      throw new InvalidRequestError(`task ${taskId} is not an agent_loop task`, { details: { field: 'execution_kind' } });
  }

  private async conversationOf(tenantId: string, runId: string): Promise<Conversation> {
    const conversation = parseConversation(await this.queries.latestArtifactContent(tenantId, runId, 'agent_conversation'));
    if (!conversation) throw new InvalidRequestError(`run ${runId} has no agent_conversation artifact to start from`, { details: { field: 'run_id' } });
    return conversation;
  }
}
