import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '@contracts/api';
import { ForbiddenError } from '@core/http/domain-error';
import { AuthenticationService } from './authentication.service';
import { IS_PUBLIC } from './public.decorator';
import { ANY_SCOPE, REQUIRED_SCOPE } from './require-scope.decorator';

/** The default scope of a matched route pattern (never the raw URL, which may be percent-encoded). */
export const defaultScope = (route: string): ApiKeyScope => (route.startsWith('/v1/') ? 'inference' : 'operator');

/**
 * docs/security.md: the operator token holds every scope; API keys carry a tenant and scopes (`inference` for /v1,
 * `operator` for /hecate/v1, `admin` where a route says `@RequireScope('admin')`; any scope where it says `@AnyScope()`). The caller was authenticated by
 * AuthenticationService's onRequest hook, before the body was read; this guard checks its scope on the matched route.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authentication: AuthenticationService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const principal = request.hecate?.principal ?? (await this.authentication.authenticate(request));
    const route = request.routeOptions.url ?? request.url.split('?')[0];
    if (this.reflector.get<boolean>(ANY_SCOPE, context.getHandler()) === true) {
      if (request.hecate) request.hecate.principal = principal;
      return true;
    }
    const scope = this.reflector.getAllAndOverride<ApiKeyScope | undefined>(REQUIRED_SCOPE, targets) ?? defaultScope(route);
    if (!principal.scopes.includes(scope)) throw new ForbiddenError(`this credential lacks the "${scope}" scope needed for ${request.method} ${route}`);
    if (request.hecate) request.hecate.principal = principal;
    return true;
  }
}
