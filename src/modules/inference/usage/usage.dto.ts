import { Type } from 'class-transformer';
import { IsISO8601, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import type { Principal } from '@core/context/request-context';

export class UsageQueryDto {
  @IsOptional() @IsISO8601() since?: string;
  @IsOptional() @IsISO8601() until?: string;
  @IsOptional() @IsString() @Length(1, 128) provider?: string;
  @IsOptional() @IsString() @Length(1, 256) model?: string;
  @IsOptional() @IsString() @Length(1, 128) request_id?: string;
  @IsOptional() @IsString() @Length(1, 128) tenant_id?: string;
  @IsOptional() @IsString() @Length(1, 128) api_key_id?: string;
  /** The usage of an External Agent session's metered adapter (the keys minted for it). */
  @IsOptional() @IsString() @Length(1, 128) agent_chat_session_id?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
}

export class TracesQueryDto {
  @IsOptional() @IsString() @Length(1, 128) request_id?: string;
  @IsOptional() @IsString() @Length(1, 128) tenant_id?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

/** The operator token sees every tenant (optionally narrowed by `tenant_id`); an API key only its own. */
export function tenantScope(caller: Principal, requested: string | undefined): string | null {
  if (caller.kind === 'operator' || caller.kind === 'local_operator') return requested ?? null;
  return caller.tenantId;
}
