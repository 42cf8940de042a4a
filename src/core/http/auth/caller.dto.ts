import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { API_KEY_SCOPES, type ApiKeyScope, type CallerResource } from '@contracts/api';
import type { Principal } from '@core/context/request-context';
import type { Assert, Documents } from '@core/http/openapi';

/** The caller of a request as the console and other clients see it (never its secret). */
@ApiSchema({ name: 'Caller' })
export class CallerResponseDto {
  @ApiProperty({ enum: ['operator', 'local_operator', 'api_key'] })
  kind!: 'operator' | 'local_operator' | 'api_key';
  tenant_id!: string;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...API_KEY_SCOPES] } })
  scopes!: ApiKeyScope[];
  /** The key's id for an API key, else null. */
  @ApiProperty({ type: 'string', nullable: true })
  api_key_id!: string | null;
}

/** A request's principal is one of the three credential kinds AuthenticationService answers (`system` is a job's, never a request's). */
export const toCallerResponse = (principal: Principal): CallerResource => ({
  kind: principal.kind as CallerResource['kind'],
  tenant_id: principal.tenantId,
  scopes: API_KEY_SCOPES.filter((s) => principal.scopes.includes(s)),
  api_key_id: principal.apiKeyId ?? null,
});

type _CallerDocumented = Assert<Documents<CallerResponseDto, CallerResource>>;
