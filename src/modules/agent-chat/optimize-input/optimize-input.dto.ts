import { ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, MaxLength, Min, ValidateNested } from 'class-validator';

/** Request of `POST /hecate/v1/agent-chat/optimize-input[/stream]` (docs/api.md §5 "User input optimization"). */

/** A message of the conversation the draft belongs to (the reference's `DisplayContextMessage`). */
@ApiSchema({ name: 'OptimizeInputHistoryMessage' })
export class OptimizeInputHistoryMessageDto {
  @IsString() @MaxLength(32) role!: string;
  /** Only its first 4,000 characters inform the rewrite (and only the last 12 messages). */
  @IsString() @MaxLength(200_000) content!: string;
}

/** The API contract's `UserInputOptimizeRequest`: the draft (`current_input`, or `input`) and what may inform its rewrite. */
@ApiSchema({ name: 'OptimizeInputRequest' })
export class OptimizeInputDto {
  /** The draft prompt to rewrite (the API contract's name). */
  @IsOptional() @IsString() @MaxLength(1_000_000) current_input?: string;
  /** The same as `current_input` (send one of the two). */
  @IsOptional() @IsString() @MaxLength(1_000_000) input?: string;
  /** Recent messages of the conversation (oldest first); without them, `session_id`'s recent messages are used. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => OptimizeInputHistoryMessageDto)
  history_messages?: OptimizeInputHistoryMessageDto[];
  /** An Agent Chat session of the caller whose recent messages are the draft's context. */
  @IsOptional() @IsString() @MaxLength(200) session_id?: string;
  /** The model to rewrite with; default GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL. */
  @IsOptional() @IsString() @MaxLength(400) model?: string;
  /** Pins a provider (no failover), as on /v1. */
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  /** Extra guidance for the rewrite ("make it shorter", "ask for tests"). */
  @IsOptional() @IsString() @MaxLength(1_000_000) instructions?: string;
  /** The language of the rewrite; default the draft's own. */
  @IsOptional() @IsString() @MaxLength(64) language?: string;
  /** Accepted for the API contract's clients and ignored: the caller is the credential's tenant. */
  @IsOptional() @IsString() @MaxLength(200) user_id?: string;
  /** The most this call may cost (micro-USD); a route whose worst case exceeds it is refused (402 `budget_exceeded`). */
  @IsOptional() @IsInt() @Min(0) budget_micros_usd?: number;
  /** Output tokens of the rewrite (and the budget check's worst case). */
  @IsOptional() @IsInt() @Min(1) max_tokens?: number;
}
