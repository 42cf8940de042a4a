import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'hecate:public';
/** Route needs no credential (liveness, readiness, metrics). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

export const REQUIRED_SCOPE = 'hecate:required-scope';
/**
 * Route needs this scope besides its path's (`inference` for /v1, `operator` for /hecate/v1). `admin` guards what every
 * tenant shares (DESIGN §8): only the operator token has it by default.
 */
export const RequireScope = (scope: 'admin'): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_SCOPE, scope);
