import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

const BOOLEAN_QUERY = ['true', 'false', '1', '0'];
export const queryFlag = (v: string | undefined): boolean => v === 'true' || v === '1';

export class CreateChatSessionDto {
  @IsOptional() @IsString() @MaxLength(500) title?: string;
  @IsOptional() @IsString() @MaxLength(200_000) system_prompt?: string;
  @IsOptional() @IsString() @MaxLength(500) user?: string;
}

export class UpdateChatSessionDto extends CreateChatSessionDto {}

export class ListChatSessionsQueryDto {
  /** Also list pre-compression snapshots (otherwise one row per lineage: its tip). */
  @IsOptional() @IsIn(BOOLEAN_QUERY) include_snapshots?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  /** `next_cursor` of the previous page. */
  @IsOptional() @IsString() cursor?: string;
}

export class GetChatSessionQueryDto {
  /** `active_path` (default): the messages from the root to the active leaf; `tree`: every message. */
  @IsOptional() @IsIn(['active_path', 'tree']) view?: 'active_path' | 'tree';
}

class GenerationOptionsDto {
  @IsOptional() @IsString() @MinLength(1) model?: string;
  @IsOptional() @IsString() @MinLength(1) provider?: string;
  @IsOptional() @IsBoolean() stream?: boolean;
}

/** A message's content: a string, or OpenAI content parts. */
const CONTENT: ApiPropertyOptions = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }] };

export class SendChatMessageDto extends GenerationOptionsDto {
  /** A string, or OpenAI content parts. */
  @ApiProperty(CONTENT)
  @IsDefined()
  content!: unknown;
  /** Append under this message instead of the active leaf. */
  @IsOptional() @IsString() parent_id?: string;
  /** Retries with the same id return the same messages and never generate twice. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) client_request_id?: string;
}

export class RegenerateChatMessageDto extends GenerationOptionsDto {}

export class EditChatMessageDto extends GenerationOptionsDto {
  @ApiProperty(CONTENT)
  @IsDefined()
  content!: unknown;
  /** Generate a reply to the edited message (default true). */
  @IsOptional() @IsBoolean() regenerate?: boolean;
}

export class ContinueChatMessageDto extends GenerationOptionsDto {}

export class SetActiveLeafDto {
  @IsString() @MinLength(1) message_id!: string;
}

export class StopChatSessionDto {
  /** Stop only this in-flight assistant message (default: every generation of the session). */
  @IsOptional() @IsString() message_id?: string;
}

export class CompactChatSessionDto {
  @IsOptional() @IsString() @MinLength(1) model?: string;
  @IsOptional() @IsString() @MinLength(1) provider?: string;
  @IsOptional() @IsInt() @Min(0) @Max(1000) keep_last_messages?: number;
}
