import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import {
  APPROVAL_STATUSES,
  GRANT_SCOPES,
  SCOPE_CHOICES,
  TOOL_KINDS,
  type ApprovalScope,
  type TurnApprovalStatus as ApprovalStatus,
  type ToolKind,
} from '@modules/approvals';

/** `runtime_kind` is checked by the service (its own 400 type, `agent_chat.runtime_kind_invalid`), not here. */
export class CreateAgentChatSessionDto {
  @IsOptional() @IsString() runtime_kind?: string;
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
  @IsOptional() @IsString() @MaxLength(400) title?: string;
  @IsOptional() @IsString() @MaxLength(4096) workspace?: string;
  @IsOptional() @IsString() @MaxLength(200_000) system_prompt?: string;
  @IsOptional() @IsString() @MaxLength(200) adapter_id?: string;
  /** A saved agent (docs/api.md §5 `agent_id`): fills runtime_kind, provider, model and system_prompt (fields given here win); its agent turns run with its tools, MCP servers and turn cap. */
  @IsOptional() @IsString() @MaxLength(200) agent_id?: string;
  /** A version of `agent_id` (default: its latest). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) agent_version?: number;
}

export class PostAgentChatMessageDto {
  @IsString() @MaxLength(1_000_000) content!: string;
  @IsOptional() @IsString() runtime_kind?: string;
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
  @IsOptional() @IsString() @MaxLength(200_000) system_prompt?: string;
  @IsOptional() @IsString() @MaxLength(4096) workspace?: string;
  /** Answer with the turn's SSE stream instead of waiting for its end. */
  @IsOptional() @IsBoolean() stream?: boolean;
  /** false: answer 202 with the turn at once. */
  @IsOptional() @IsBoolean() wait?: boolean;
  /** While a turn is active: `reject` (409, the default), `interrupt` (stop it, then run this), `enqueue` (queued-next). */
  @IsOptional() @IsIn(['reject', 'interrupt', 'enqueue']) on_busy?: 'reject' | 'interrupt' | 'enqueue';
}

export class ListAgentChatSessionsDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
}

export class AgentChatStreamQueryDto {
  /** Resume the session's current (or latest) turn after this index. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) last_index?: number;
}

/** docs/api.md §5 inject-user-message. */
export class AddGuidanceDto {
  @IsString() @MaxLength(200_000) content!: string;
  @IsOptional()
  @IsString()
  @MaxLength(200)
  @Matches(/^[A-Za-z0-9_.:-]+$/, { message: 'guidance_id may contain letters, digits, _ . : -' })
  guidance_id?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

export class PatchGuidanceDto {
  @IsString() @MaxLength(200_000) content!: string;
}

export class ListGuidanceDto {
  @IsOptional() @IsIn(['pending', 'all']) status?: 'pending' | 'all';
}

export class RerunDto {
  @IsOptional() @IsString() @MaxLength(1_000_000) guidance_content?: string;
  @IsOptional() @IsString() @MaxLength(200) guidance_id?: string;
  @IsOptional() @IsString() runtime_kind?: string;
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
  @IsOptional() @IsBoolean() stream?: boolean;
  @IsOptional() @IsBoolean() wait?: boolean;
}

export class EditLastUserMessageDto {
  @IsString() @MaxLength(1_000_000) content!: string;
}

export class PatchQueueItemDto {
  @IsOptional() @IsString() @MaxLength(1_000_000) content?: string;
  @IsOptional() @IsString() runtime_kind?: string;
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
}

export class RevertFilesDto {
  /** Paths of the message's captured diff; empty: all of them. */
  @IsOptional() @IsArray() @ArrayMaxSize(10_000) @IsString({ each: true }) @MaxLength(4096, { each: true }) paths?: string[];
}

/** `POST …/approvals/{approval_id}/resolve` (docs/api.md §4): `reject` is accepted for `deny`. */
export class ResolveAgentChatApprovalDto {
  @IsIn(['approve', 'deny', 'reject']) decision!: 'approve' | 'deny' | 'reject';
  @IsOptional() @IsIn(SCOPE_CHOICES) scope?: ApprovalScope;
  @IsOptional() @IsString() @MaxLength(200) selected_option?: string;
  @IsOptional() @IsString() @MaxLength(4000) note?: string;
  /** When a grant this decision leaves (scope other than `once`) stops matching; none: until revoked. */
  @IsOptional() @IsISO8601() grant_expires_at?: string;
}

export class ListAgentChatApprovalsDto {
  @IsOptional() @IsIn(APPROVAL_STATUSES) status?: ApprovalStatus;
}

export class ListAgentChatGrantsDto {
  @IsOptional() @IsString() @MaxLength(200) adapter_id?: string;
  @IsOptional() @IsIn(GRANT_SCOPES) scope?: ApprovalScope;
  @IsOptional() @IsIn(TOOL_KINDS) tool_kind?: ToolKind;
}
