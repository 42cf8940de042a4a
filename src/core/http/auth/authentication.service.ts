import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyScope } from '@contracts/api';
import { AppConfig } from '@core/config/app-config';
import { DEFAULT_TENANT_ID, Principal } from '@core/context/request-context';
import { sendError } from '@core/http/all-exceptions.filter';
import { NotFoundError, UnauthorizedError } from '@core/http/domain-error';
import { SANDBOX_RELAY_HEADER } from '@core/net/sandbox-relay';
import { ApiKeyService } from './api-key.service';
import { PUBLIC_ROUTE } from './public.decorator';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Every scope: what the operator token (and the local operator) holds. */
export const ALL_SCOPES: readonly ApiKeyScope[] = ['inference', 'operator', 'admin'];

export function credentialOf(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  const key = request.headers['x-api-key'];
  return (Array.isArray(key) ? key[0] : key)?.trim() || undefined;
}

/**
 * Authentication happens in a Fastify `onRequest` hook, before the body is read: an unknown path answers 404 and a
 * missing or wrong credential 401 without the server reading (or buffering) what the client sends. Public routes
 * (`@Public()`) skip it. The principal is kept on the request for AuthGuard (scopes) and the rate limiter.
 */
@Injectable()
export class AuthenticationService implements OnModuleInit {
  private readonly tokenDigest: Buffer | undefined;
  /**
   * Credentials already proven equal to the operator token (so at most that one string): a hash lookup, whose
   * timing does not depend on the secret, instead of a SHA-256 per request.
   */
  private readonly provenOperator = new Set<string>();

  constructor(
    private readonly keys: ApiKeyService,
    config: AppConfig,
    @Optional() @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost | null,
  ) {
    this.tokenDigest = config.auth.token ? digest(config.auth.token) : undefined;
  }

  onModuleInit(): void {
    const fastify = this.adapterHost?.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (!fastify || typeof fastify.addHook !== 'function') return;
    fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.is404) {
        sendError(new NotFoundError(`no route for ${request.method} ${request.url.split('?')[0]}`), request, reply);
        return reply;
      }
      if (request.routeOptions.config?.[PUBLIC_ROUTE] === true) return;
      try {
        const principal = await this.authenticate(request);
        if (request.hecate) request.hecate.principal = principal;
        else request.hecate = { requestId: String(request.id), principal };
      } catch (err) {
        sendError(err, request, reply);
        return reply;
      }
    });
  }

  /** The caller: the operator token, a live API key, or (no token configured) the local operator. */
  async authenticate(request: FastifyRequest): Promise<Principal> {
    const credential = credentialOf(request);
    if (credential && this.tokenDigest && (this.provenOperator.has(credential) || timingSafeEqual(digest(credential), this.tokenDigest))) {
      this.provenOperator.add(credential);
      return { kind: 'operator', tenantId: DEFAULT_TENANT_ID, scopes: ALL_SCOPES };
    }
    const keyPrincipal = credential?.startsWith('hk_') ? await this.keys.verify(credential) : null;
    if (keyPrincipal) return keyPrincipal;
    // A sandboxed command's request relayed to this server is never the local operator (docs/security.md).
    if (!this.tokenDigest && request.headers[SANDBOX_RELAY_HEADER] === undefined)
      return { kind: 'local_operator', tenantId: DEFAULT_TENANT_ID, scopes: ALL_SCOPES };
    throw new UnauthorizedError(credential ? 'invalid credential' : 'missing credential');
  }
}
