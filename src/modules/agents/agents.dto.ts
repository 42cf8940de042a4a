import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { APPROVAL_POLICY_NAMES } from '@core/config/groups/tasks.env';
import type { Assert, Documents } from '@core/http/openapi';
import { BUILTIN_TOOL_NAMES } from '@modules/agent-loop';
import { redactMcpServers } from '@modules/mcp';
import type { AgentDefinition, AgentRow, AgentVersionRow } from './agents.repository';

export const AGENT_RUNTIME_KINDS = ['model', 'agent'] as const;
const NAME = /^\S(?:.*\S)?$/;

/** Every field of a definition but the name (PATCH: each optional; `null` resets a list to the server's default). */
class AgentFieldsDto {
  @IsOptional() @IsString() @MaxLength(2000) description?: string;
  /** `model`: chat turns are plain model calls; `agent` (default): the agent loop with tools in a workspace. */
  @IsOptional() @IsIn(AGENT_RUNTIME_KINDS) runtime_kind?: 'model' | 'agent';
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
  @IsOptional() @IsString() @MaxLength(200_000) system_prompt?: string;
  /** Built-in tools the agent loop offers (absent or null: all of them). */
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...BUILTIN_TOOL_NAMES] }, nullable: true, required: false })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(BUILTIN_TOOL_NAMES, { each: true })
  builtin_tools?: string[] | null;
  /** MCP servers (docs/api.md §4 `mcp_servers`, with `approval_policy` each); literal env/header values are stored sealed. */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, required: false })
  @IsOptional()
  @IsArray()
  @IsObject({ each: true })
  mcp_servers?: Record<string, unknown>[];
  /** Approval policies of the loop's built-in tool calls (absent or null: GATEWAY_TASK_APPROVAL_POLICIES; []: none). */
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...APPROVAL_POLICY_NAMES] }, nullable: true, required: false })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(APPROVAL_POLICY_NAMES, { each: true })
  approval_policies?: string[] | null;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) budget_micros_usd?: number;
  /** Model calls a run may make (absent or 0: GATEWAY_TASK_AGENT_LOOP_MAX_TURNS). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1000) max_turns?: number;
}

/** `POST /hecate/v1/agents` and `PUT /hecate/v1/agents/{agent_id}` (a whole definition). */
export class CreateAgentDto extends AgentFieldsDto {
  @IsString() @MaxLength(200) @Matches(NAME, { message: 'name must not be blank or start or end with whitespace' }) name!: string;
}

/** `PATCH /hecate/v1/agents/{agent_id}`: the fields to change. */
export class PatchAgentDto extends AgentFieldsDto {
  @IsOptional() @IsString() @MaxLength(200) @Matches(NAME, { message: 'name must not be blank or start or end with whitespace' }) name?: string;
}

export class ListAgentsQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  /** `next_cursor` of the previous page. */
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
}

/** The definition fields as responses show them (MCP env and header values `[redacted]`). */
class AgentDefinitionViewDto {
  name!: string;
  description?: string;
  @ApiProperty({ enum: AGENT_RUNTIME_KINDS })
  runtime_kind!: 'model' | 'agent';
  provider?: string;
  model?: string;
  system_prompt?: string;
  builtin_tools?: string[];
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  mcp_servers!: unknown[];
  approval_policies?: string[];
  budget_micros_usd?: number;
  max_turns?: number;
}

@ApiSchema({ name: 'Agent' })
export class AgentResponseDto extends AgentDefinitionViewDto {
  id!: string;
  /** The latest version (1 at creation; every update adds one). */
  version!: number;
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'AgentVersion' })
export class AgentVersionResponseDto extends AgentDefinitionViewDto {
  agent_id!: string;
  version!: number;
  created_at!: string;
}

@ApiSchema({ name: 'AgentDeleted' })
export class AgentDeletedDto {
  id!: string;
  deleted!: boolean;
}

const opt = (s: string): string | undefined => (s ? s : undefined);

function definitionView(d: AgentDefinition) {
  return {
    name: d.name,
    description: opt(d.description),
    runtime_kind: d.runtime_kind,
    provider: opt(d.provider),
    model: opt(d.model),
    system_prompt: opt(d.system_prompt),
    builtin_tools: d.builtin_tools ?? undefined,
    // env and header values may be literal secrets: never echoed (docs/design.md §4.8), as on tasks.
    mcp_servers: redactMcpServers(d.mcp_servers),
    approval_policies: d.approval_policies ?? undefined,
    budget_micros_usd: d.budget_micros_usd || undefined,
    max_turns: d.max_turns || undefined,
  };
}

export const toAgentResponse = (a: AgentRow) => ({
  id: a.id,
  version: a.version,
  ...definitionView(a.definition),
  created_at: a.created_at.toISOString(),
  updated_at: a.updated_at.toISOString(),
});

export const toAgentVersionResponse = (v: AgentVersionRow) => ({
  agent_id: v.agent_id,
  version: v.version,
  ...definitionView(v.definition),
  created_at: v.created_at.toISOString(),
});

type _AgentDocumented = Assert<Documents<AgentResponseDto, ReturnType<typeof toAgentResponse>>>;
type _AgentVersionDocumented = Assert<Documents<AgentVersionResponseDto, ReturnType<typeof toAgentVersionResponse>>>;
