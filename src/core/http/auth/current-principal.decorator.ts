import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DEFAULT_TENANT_ID, Principal } from '@core/context/request-context';

/** The authenticated caller (set by the authentication hook; a route without one gets a principal with no scope). */
export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest>();
  return request.hecate?.principal ?? { kind: 'system', tenantId: DEFAULT_TENANT_ID, scopes: [] };
});
