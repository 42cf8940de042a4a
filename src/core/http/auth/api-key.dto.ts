import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ArrayNotEmpty, ArrayUnique, IsArray, IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyResource, type ApiKeyScope, type CreatedApiKeyResource } from '@contracts/api';
import type { Assert, Documents } from '@core/http/openapi';
import type { ApiKeyEntity } from './api-key.entity';

export class CreateApiKeyDto {
  @IsString() @Length(1, 200) name!: string;
  @IsArray() @ArrayNotEmpty() @ArrayUnique() @IsIn(API_KEY_SCOPES, { each: true }) scopes!: ApiKeyScope[];
  /** Only the operator token may create keys for another tenant (or with the `admin` scope). */
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9._-]{1,64}$/) tenant_id?: string;
}

export const toApiKeyResponse = (row: ApiKeyEntity): ApiKeyResource => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  tenant_id: row.tenantId,
  scopes: row.scopes as ApiKeyScope[],
  created_at: row.createdAt.toISOString(),
  last_used_at: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
});

/** An API key; its secret is never shown again after creation. */
@ApiSchema({ name: 'ApiKey' })
export class ApiKeyResponseDto {
  id!: string;
  name!: string;
  /** The key's public prefix (`hk_…`), to find a leaked key. */
  prefix!: string;
  tenant_id!: string;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...API_KEY_SCOPES] } })
  scopes!: ApiKeyScope[];
  created_at!: string;
  last_used_at!: string | null;
  revoked_at!: string | null;
}

@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyResponseDto extends ApiKeyResponseDto {
  /** Returned exactly once, at creation. */
  secret!: string;
}

type _KeyDocumented = Assert<Documents<ApiKeyResponseDto, ApiKeyResource>>;
type _CreatedDocumented = Assert<Documents<CreatedApiKeyResponseDto, CreatedApiKeyResource>>;
