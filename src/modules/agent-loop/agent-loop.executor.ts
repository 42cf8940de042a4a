import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ModelNotConfiguredError } from '@modules/inference';
import { checkMcpServers } from '@modules/mcp';
import { type ExecutionPlan, type RunExecutor, RunExecutorKind } from '@modules/tasks';
import type { ExecutionContext } from '@modules/tasks';

type Task = ExecutionContext['task'];

/**
 * execution_kind=agent_loop (docs/api.md §4, docs/design.md §11): create-time validation, the start-time model check and the plan.
 * The loop itself is AgentLoopRunner, which only workers build. No pre-execution gate: its tool calls are gated
 * mid-loop (`agent_loop_tool_call`).
 */
@Injectable()
@RunExecutorKind()
export class AgentLoopExecutor implements RunExecutor {
  readonly kind = 'agent_loop';

  constructor(private readonly config: AppConfig) {}

  /**
   * MCP walls first: a `$VAR` nobody allowlisted is refused for every caller (403
   * mcp.secret_reference_not_allowed), a stdio command off GATEWAY_MCP_STDIO_ALLOW for API keys (403
   * mcp.command_not_allowed). Nothing is stored, nothing runs.
   */
  validate(task: Task, caller: { hostPaths: boolean } = { hostPaths: false }): string[] {
    const mcpProblems = checkMcpServers(task.mcpServers, this.config.mcp, this.config.tasks.mcp.maxServersPerTask, caller);
    const problems: string[] = [];
    if (!task.prompt.trim()) problems.push('prompt is required for execution_kind=agent_loop');
    if (task.budgetMicrosUsd < 0) problems.push('budget_micros_usd must not be negative');
    problems.push(...mcpProblems);
    return problems;
  }

  /** 422 model_not_configured at start when neither the task nor GATEWAY_DEFAULT_MODEL names a model (no run is created). */
  preflight(task: Task): void {
    if (task.requestedModel || this.config.gateway.defaultModel) return;
    throw new ModelNotConfiguredError('this agent_loop task names no model and GATEWAY_DEFAULT_MODEL is not set', {
      model: '',
      provider: task.requestedProvider || undefined,
      suggested_models: [],
    });
  }

  plan(task: Task, workspacePath: string): ExecutionPlan {
    const model = task.requestedModel || this.config.gateway.defaultModel || '';
    return {
      summary: [`agent loop with ${model || 'the default model'}`, `cwd: ${workspacePath}`, `max turns: ${task.maxTurns || this.config.agent.maxTurns}`],
      details: { model, cwd: workspacePath },
      identity: { model, cwd: workspacePath },
    };
  }
}
