import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import { redactMcpServers } from '@modules/mcp';
import type { TaskStatus } from './run-status';
import type { TaskEntity } from './task.entity';

/** A client's own name for a task (`client_ref`). */
const CLIENT_REF = /^[A-Za-z0-9._:-]{1,200}$/;

export const WORKSPACE_MODES = ['', 'persistent', 'ephemeral', 'in_place'] as const;
export const FILE_OPERATIONS = ['write', 'append', 'delete'] as const;
export const EXECUTION_PROFILES = ['', 'repo_local', 'coding_agent'] as const;

/** `POST /hecate/v1/tasks` (docs/api.md §4 "Task fields"). */
export class CreateTaskDto {
  @IsOptional() @IsString() @MaxLength(500) title?: string;
  @IsOptional() @IsString() @MaxLength(200_000) prompt?: string;
  @IsOptional() @IsString() @MaxLength(200_000) system_prompt?: string;
  @IsOptional() @IsString() @MaxLength(64) execution_kind?: string;
  @IsOptional() @IsIn(EXECUTION_PROFILES) execution_profile?: string;
  @IsOptional() @IsString() @MaxLength(100_000) shell_command?: string;
  @IsOptional() @IsString() @MaxLength(100_000) git_command?: string;
  @IsOptional() @IsString() @MaxLength(4096) file_path?: string;
  @IsOptional() @IsString() file_content?: string;
  @IsOptional() @IsIn(FILE_OPERATIONS) file_operation?: string;
  @IsOptional() @IsString() @MaxLength(4096) working_directory?: string;
  @IsOptional() @IsIn(WORKSPACE_MODES) workspace_mode?: string;
  @IsOptional() @IsString() @MaxLength(4096) repo?: string;
  @IsOptional() @IsString() @MaxLength(255) base_branch?: string;
  @IsOptional() @IsString() @MaxLength(4096) sandbox_allowed_root?: string;
  @IsOptional() @IsBoolean() sandbox_read_only?: boolean;
  @IsOptional() @IsBoolean() sandbox_network?: boolean;
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @IsString()
  @MaxLength(32)
  priority?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(24 * 3_600_000) timeout_ms?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) budget_micros_usd?: number;
  @IsOptional() @IsString() @MaxLength(255) requested_provider?: string;
  @IsOptional() @IsString() @MaxLength(255) requested_model?: string;
  /** MCP servers the run may use (docs/api.md §4 `mcp_servers`: stdio `command`/`args`/`env` or `url`/`headers`). */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  mcp_servers?: Record<string, unknown>[];
  /** A saved agent: its model, system prompt, tools, MCP servers, budget and turn cap; fields given here win. */
  @IsOptional() @IsString() @MaxLength(200) agent_id?: string;
  /** A version of `agent_id` (default: its latest). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) agent_version?: number;
  /** The client's own name for the task, to find it again (`GET /hecate/v1/tasks?client_ref=`): the ACP agent's editor session id. */
  @IsOptional() @IsString() @Matches(CLIENT_REF, { message: 'client_ref: 1–200 letters, digits, and . _ : -' }) client_ref?: string;
}

export class ListTasksQueryDto {
  @IsOptional() @IsString() status?: string;
  /** Only tasks of this execution kind (`shell`, `git`, `file`, `agent_loop`). */
  @IsOptional() @IsString() @MaxLength(64) execution_kind?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) limit?: number;
  /** Only tasks with this `client_ref` (newest first). */
  @IsOptional() @IsString() @Matches(CLIENT_REF, { message: 'client_ref: 1–200 letters, digits, and . _ : -' }) client_ref?: string;
}

const opt = (s: string): string | undefined => (s ? s : undefined);

/** A task as every task route answers it (docs/api.md §4 "Task fields"). */
@ApiSchema({ name: 'Task' })
export class TaskResponseDto {
  id!: string;
  title!: string;
  prompt!: string;
  system_prompt?: string;
  execution_profile?: string;
  execution_kind!: string;
  repo?: string;
  base_branch?: string;
  workspace_mode?: string;
  shell_command?: string;
  git_command?: string;
  working_directory?: string;
  file_operation?: string;
  file_path?: string;
  file_content?: string;
  sandbox_allowed_root?: string;
  sandbox_read_only!: boolean;
  sandbox_network!: boolean;
  timeout_ms?: number;
  status!: TaskStatus;
  priority?: string;
  requested_model?: string;
  requested_provider?: string;
  budget_micros_usd?: number;
  latest_run_id?: string;
  last_error?: string;
  /** MCP server entries with every `env` and `headers` value shown as `[redacted]`. */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  mcp_servers?: unknown[];
  /** The saved agent and version the task was created from. */
  agent_id?: string;
  agent_version?: number;
  /** The client's own name for the task (the ACP agent's editor session id). */
  client_ref?: string;
  /** The agent's turn cap (model calls per run), built-in tools and approval policies, when it set them. */
  max_turns?: number;
  builtin_tools?: string[];
  approval_policies?: string[];
  created_at!: string;
  updated_at!: string;
  started_at?: string;
  finished_at?: string;
}

export const toTaskResponse = (t: TaskEntity) => ({
  id: t.id,
  title: t.title,
  prompt: t.prompt,
  system_prompt: opt(t.systemPrompt),
  execution_profile: opt(t.executionProfile),
  execution_kind: t.executionKind,
  repo: opt(t.repo),
  base_branch: opt(t.baseBranch),
  workspace_mode: opt(t.workspaceMode),
  shell_command: opt(t.shellCommand),
  git_command: opt(t.gitCommand),
  working_directory: opt(t.workingDirectory),
  file_operation: opt(t.fileOperation),
  file_path: opt(t.filePath),
  file_content: t.executionKind === 'file' && t.fileOperation !== 'delete' ? t.fileContent : undefined,
  sandbox_allowed_root: opt(t.sandboxAllowedRoot),
  sandbox_read_only: t.sandboxReadOnly,
  sandbox_network: t.sandboxNetwork,
  timeout_ms: t.timeoutMs || undefined,
  status: t.status,
  priority: opt(t.priority),
  requested_model: opt(t.requestedModel),
  requested_provider: opt(t.requestedProvider),
  budget_micros_usd: t.budgetMicrosUsd || undefined,
  latest_run_id: t.latestRunId ?? undefined,
  last_error: opt(t.lastError),
  // env and header values may be literal secrets: never echoed (docs/design.md §4.8).
  mcp_servers: t.mcpServers.length > 0 ? redactMcpServers(t.mcpServers) : undefined,
  agent_id: t.agentId ?? undefined,
  agent_version: t.agentVersion ?? undefined,
  client_ref: t.clientRef ?? undefined,
  max_turns: t.maxTurns || undefined,
  builtin_tools: t.builtinTools ?? undefined,
  approval_policies: t.approvalPolicies ?? undefined,
  created_at: t.createdAt.toISOString(),
  updated_at: t.updatedAt.toISOString(),
  started_at: t.startedAt?.toISOString(),
  finished_at: t.finishedAt?.toISOString(),
});

type _TaskDocumented = Assert<Documents<TaskResponseDto, ReturnType<typeof toTaskResponse>>>;
