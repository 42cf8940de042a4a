import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiSecurity } from '@nestjs/swagger';

declare module 'fastify' {
  interface FastifyContextConfig {
    hecatePublic?: boolean;
  }
}

export const IS_PUBLIC = 'hecate:public';
/** Key of the Fastify route config that marks a public route (read by the authentication hook before the body). */
export const PUBLIC_ROUTE = 'hecatePublic' as const;
/**
 * Route needs no credential (liveness, readiness, metrics). Method-level only: the hook reads the route's config. The
 * OpenAPI document lists it with an empty security requirement (anonymous).
 */
export const Public = (): MethodDecorator => applyDecorators(SetMetadata(IS_PUBLIC, true), RouteConfig({ [PUBLIC_ROUTE]: true }), ApiSecurity({}));
