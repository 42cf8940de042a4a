import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ResolveApprovalDto } from '@modules/approvals';
import { PostAgentChatMessageDto } from '@modules/agent-chat';
import { GetChatSessionQueryDto } from '@modules/chat-sessions';
import { RunReasonDto } from '@modules/tasks';

/**
 * Tool arguments, validated by the same pipe as /hecate/v1 (unknown fields refused). A tool whose route takes a body
 * extends that body's DTO with the path's ids; the list tools take JSON numbers and booleans where their routes take
 * query strings, with the routes' limits.
 */

export class TaskArgs {
  @IsString() @MinLength(1) @MaxLength(200) task_id!: string;
}

export class RunArgs extends TaskArgs {
  @IsString() @MinLength(1) @MaxLength(200) run_id!: string;
}

export class ListRunEventsArgs extends RunArgs {
  @IsOptional() @IsInt() @Min(0) after_sequence?: number;
  @IsOptional() @IsInt() @Min(1) @Max(500) limit?: number;
}

export class CancelRunArgs extends RunReasonDto {
  @IsString() @MinLength(1) @MaxLength(200) task_id!: string;
  @IsString() @MinLength(1) @MaxLength(200) run_id!: string;
}

export class ResolveApprovalArgs extends ResolveApprovalDto {
  @IsString() @MinLength(1) @MaxLength(200) task_id!: string;
  @IsString() @MinLength(1) @MaxLength(200) approval_id!: string;
}

export class ListPendingApprovalsArgs {
  @IsOptional() @IsInt() @Min(1) @Max(500) limit?: number;
}

export class ListChatSessionsArgs {
  @IsOptional() @IsBoolean() include_snapshots?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(1000) limit?: number;
  @IsOptional() @IsString() cursor?: string;
}

export class GetChatSessionArgs extends GetChatSessionQueryDto {
  @IsString() @MinLength(1) @MaxLength(200) session_id!: string;
}

export class SendAgentChatMessageArgs extends PostAgentChatMessageDto {
  @IsString() @MinLength(1) @MaxLength(200) session_id!: string;
}
