import { SetMetadata } from '@nestjs/common';
import type { ApiKeyScope } from '@contracts/api';

export const REQUIRED_SCOPE = 'hecate:required-scope';
export const ANY_SCOPE = 'hecate:any-scope';

/**
 * The scope a route needs instead of its path's default (`inference` for /v1, `operator` for /hecate/v1).
 * `admin` marks settings every tenant shares (providers and their keys, pricing, capabilities, retention, system
 * operations): only the operator token has it unless it granted it to a key. Read by AuthGuard.
 */
export const RequireScope = (scope: ApiKeyScope): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_SCOPE, scope);

/**
 * Any verified credential, whatever its scopes: for routes that only describe the caller to itself (`GET
 * /hecate/v1/whoami`), so a client holding an `inference`-only key can learn what it may do. Method-level only.
 */
export const AnyScope = (): MethodDecorator => SetMetadata(ANY_SCOPE, true);
