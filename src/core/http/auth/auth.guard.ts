import { timingSafeEqual, createHash } from 'node:crypto';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '@core/config/app-config';
import { DEFAULT_TENANT_ID, Principal } from '@core/context/request-context';
import { ForbiddenError, UnauthorizedError } from '@core/http/domain-error';
import { ApiKeyService } from './api-key.service';
import { IS_PUBLIC, REQUIRED_SCOPE } from './public.decorator';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function credentialOf(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  const key = request.headers['x-api-key'];
  return (Array.isArray(key) ? key[0] : key)?.trim() || undefined;
}

export const requiredScope = (url: string): 'inference' | 'operator' => (url.startsWith('/v1/') ? 'inference' : 'operator');

/**
 * DESIGN §8: the operator token is accepted everywhere; API keys carry a tenant and scopes
 * (`inference` for /v1, `operator` for /hecate/v1). Without GATEWAY_AUTH_TOKEN callers are the local
 * operator (the server then binds loopback only), unless they present a valid API key.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;
  /**
   * Credentials already proven equal to the operator token (so at most that one string): a hash lookup, whose
   * timing does not depend on the secret, instead of a SHA-256 per request.
   */
  private readonly provenOperator = new Set<string>();

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
    config: AppConfig,
  ) {
    this.tokenDigest = config.auth.token ? digest(config.auth.token) : undefined;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const principal = await this.authenticate(request);
    const scope = requiredScope(request.url);
    if (!principal.scopes.includes(scope)) {
      throw new ForbiddenError(`this API key lacks the "${scope}" scope needed for ${request.url.split('?')[0]}`);
    }
    const extra = this.reflector.getAllAndOverride<'admin' | undefined>(REQUIRED_SCOPE, [context.getHandler(), context.getClass()]);
    if (extra && !principal.scopes.includes(extra)) {
      throw new ForbiddenError(`this API key lacks the "${extra}" scope: ${request.method} ${request.url.split('?')[0]} changes settings every tenant shares`);
    }
    if (request.hecate) request.hecate.principal = principal;
    return true;
  }

  private async authenticate(request: FastifyRequest): Promise<Principal> {
    const credential = credentialOf(request);
    if (credential && this.tokenDigest && (this.provenOperator.has(credential) || timingSafeEqual(digest(credential), this.tokenDigest))) {
      this.provenOperator.add(credential);
      return { kind: 'operator', tenantId: DEFAULT_TENANT_ID, scopes: ['inference', 'operator', 'admin'] };
    }
    const keyPrincipal = credential?.startsWith('hk_') ? await this.keys.verify(credential) : null;
    if (keyPrincipal) return keyPrincipal;
    if (!this.tokenDigest) return { kind: 'local_operator', tenantId: DEFAULT_TENANT_ID, scopes: ['inference', 'operator', 'admin'] };
    throw new UnauthorizedError(credential ? 'invalid credential' : 'missing credential');
  }
}
