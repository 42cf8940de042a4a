import { IsBoolean, IsIn, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import type { RuntimeProvider } from './runtime-provider';

const URL_PATTERN = /^https?:\/\/[^\s/@]+(\/[^\s]*)?$/;
const URL_MESSAGE = 'base_url must be an http(s) URL without embedded credentials';

export class CreateProviderDto {
  @IsOptional() @IsString() @Length(1, 64) name?: string;
  @IsOptional() @IsString() @Length(1, 64) preset_id?: string;
  @IsOptional() @IsString() @Length(1, 64) custom_name?: string;
  @IsOptional() @IsIn(['cloud', 'local']) kind?: 'cloud' | 'local';
  @IsOptional() @IsIn(['openai', 'anthropic']) protocol?: 'openai' | 'anthropic';
  @IsOptional() @Matches(URL_PATTERN, { message: URL_MESSAGE }) base_url?: string;
  @IsOptional() @IsString() @Length(1, 4096) api_key?: string;
  @IsOptional() @IsString() @Length(0, 256) default_model?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() account_id?: string;
}

export class UpdateProviderDto {
  @IsOptional() @IsIn(['cloud', 'local']) kind?: 'cloud' | 'local';
  @IsOptional() @IsIn(['openai', 'anthropic']) protocol?: 'openai' | 'anthropic';
  @IsOptional() @Matches(URL_PATTERN, { message: URL_MESSAGE }) base_url?: string;
  /** The key for the new `base_url`: a changed `base_url` drops the stored key unless this sets one. */
  @IsOptional() @IsString() @Length(1, 4096) api_key?: string;
  @IsOptional() @IsString() @Length(0, 256) default_model?: string;
  @IsOptional() @IsString() @Length(1, 64) custom_name?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
}

export class SetProviderKeyDto {
  /** null or '' clears the stored key (an env key, if any, applies again). */
  @ValidateIf((o: SetProviderKeyDto) => o.api_key !== null && o.api_key !== '') @IsString() @Length(1, 4096) api_key!: string | null;
}

export const toProviderResponse = (p: RuntimeProvider) => ({
  id: p.id,
  name: p.id,
  display_name: p.displayName,
  preset_id: p.presetId,
  custom_name: p.customName,
  kind: p.kind,
  protocol: p.protocol,
  base_url: p.baseUrl,
  default_model: p.defaultModel ?? null,
  enabled: p.enabled,
  source: p.source,
  env_configured: p.envConfigured,
  credential_state: p.credentialState,
  api_key_configured: p.credentialState === 'configured',
  api_key_env: p.kind === 'local' && p.credentialState !== 'configured' ? '' : p.apiKeyEnv,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});
