import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { bool, duration, IsBooleanString, IsDuration } from '../config-validators';

/** The agent loop (execution_kind=agent_loop): turn cap, system prompt, per-call limits, the http_request tool. */
export class AgentEnv {
  /** Model calls per run before it stops with `turn_limit_exceeded`. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) GATEWAY_TASK_AGENT_LOOP_MAX_TURNS?: number;
  /** Operator layer of the system prompt (after the machine line, before AGENTS.md and the task's system_prompt). */
  @IsOptional() @IsString() GATEWAY_TASK_AGENT_SYSTEM_PROMPT?: string;
  /** max_tokens of each model call (also the budget check's worst case). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(16) GATEWAY_TASK_AGENT_MAX_TOKENS?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_HTTP_TIMEOUT?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_TASK_HTTP_MAX_RESPONSE_BYTES?: number;
  /** A running tool's output as `tool_progress` frames on the run's live stream (never in the conversation). */
  @IsOptional() @IsBooleanString() GATEWAY_TOOL_PROGRESS_ENABLED?: string;
}

export interface AgentConfig {
  maxTurns: number;
  systemPrompt: string;
  maxTokens: number;
  http: { timeoutMs: number; maxResponseBytes: number };
  toolProgress: boolean;
}

export function agentConfig(env: AgentEnv): AgentConfig {
  return {
    maxTurns: env.GATEWAY_TASK_AGENT_LOOP_MAX_TURNS ?? 8,
    systemPrompt: env.GATEWAY_TASK_AGENT_SYSTEM_PROMPT ?? '',
    maxTokens: env.GATEWAY_TASK_AGENT_MAX_TOKENS ?? 4096,
    http: { timeoutMs: duration(env.GATEWAY_TASK_HTTP_TIMEOUT, 30_000), maxResponseBytes: env.GATEWAY_TASK_HTTP_MAX_RESPONSE_BYTES ?? 256 * 1024 },
    toolProgress: bool(env.GATEWAY_TOOL_PROGRESS_ENABLED, true),
  };
}
