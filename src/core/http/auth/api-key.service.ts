import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import type { ApiKeyScope, CreatedApiKeyResource } from '@contracts/api';
import { busChannels, EventBus } from '@core/bus';
import type { Principal } from '@core/context/request-context';
import { ForbiddenError, NotFoundError } from '@core/http/domain-error';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';
import { CreateApiKeyDto, toApiKeyResponse } from './api-key.dto';

const KEY_PATTERN = /^hk_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const CACHE_TTL_MS = 5_000;
const TOUCH_EVERY_MS = 60_000;

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();
const alnum = (n: number): string => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(n);
  return Array.from(bytes, (b) => chars[b % chars.length]).join('');
};

/** A new key: its public prefix, the secret shown once, and the SHA-256 stored instead of it. */
export function newApiKeySecret(): { prefix: string; secret: string; hash: Buffer } {
  const prefix = `hk_${alnum(12)}`;
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { prefix, secret, hash: sha256(secret) };
}

interface CachedKey {
  principal: Principal;
  hash: Buffer;
  expiresAt: number;
}

/** API keys: shown once, stored as SHA-256, compared in constant time, cached briefly, revocation broadcast. */
@Injectable()
export class ApiKeyService implements OnModuleInit {
  private readonly cache = new Map<string, CachedKey>();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly bus: EventBus,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.bus.listen(busChannels.apiKeyRevoked, (message) => {
      const prefix = message.prefix;
      if (prefix) this.cache.delete(prefix);
    });
  }

  async create(caller: Principal, dto: CreateApiKeyDto): Promise<CreatedApiKeyResource> {
    // Keys cannot grant more than a tenant has: the admin scope and other tenants are the operator token's alone.
    const operatorToken = caller.kind === 'operator' || caller.kind === 'local_operator';
    if (dto.tenant_id && dto.tenant_id !== caller.tenantId && !operatorToken) {
      throw new ForbiddenError('only the operator token may create keys for another tenant');
    }
    if (dto.scopes.includes('admin') && !operatorToken) throw new ForbiddenError('only the operator token may create keys with the admin scope');
    const { prefix, secret, hash } = newApiKeySecret();
    const row: ApiKeyEntity = {
      id: randomUUID(),
      tenantId: dto.tenant_id ?? caller.tenantId,
      name: dto.name,
      prefix,
      secretHash: hash,
      scopes: dto.scopes,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.keys.insert(row);
    return { ...toApiKeyResponse(row), secret };
  }

  async list(caller: Principal) {
    return (await this.keys.list({ tenantId: this.scopeOf(caller) })).map(toApiKeyResponse);
  }

  /** Is `id` a key of the tenant (revoked or not)? For routes that name a key as their subject (budgets). */
  async belongsTo(tenantId: string, id: string): Promise<boolean> {
    // Key ids are UUIDs (the column's type): anything else is no key, not a query error.
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return false;
    return (await this.keys.find({ tenantId, id })) !== null;
  }

  async revoke(caller: Principal, id: string) {
    const row = await this.keys.find({ tenantId: this.scopeOf(caller), id });
    if (!row) throw new NotFoundError(`api key ${id} not found`);
    const at = new Date();
    await this.keys.revoke({ id, at });
    this.cache.delete(row.prefix);
    await this.bus
      .send(busChannels.apiKeyRevoked, { prefix: row.prefix })
      .catch(ignoreFailure('broadcasting an API key revocation', `other processes drop the key when their cache entry expires (${CACHE_TTL_MS} ms)`));
    return toApiKeyResponse({ ...row, revokedAt: row.revokedAt ?? at });
  }

  /** Returns the key's principal, or null when the secret is not a live key. */
  async verify(secret: string): Promise<Principal | null> {
    const match = KEY_PATTERN.exec(secret);
    if (!match) return null;
    const prefix = `hk_${match[1]}`;
    const hash = sha256(secret);
    const now = Date.now();
    let cached = this.cache.get(prefix);
    if (!cached || cached.expiresAt <= now) {
      const row = await this.keys.findActiveByPrefix(prefix);
      if (!row) {
        this.cache.delete(prefix);
        return null;
      }
      cached = {
        hash: Buffer.from(row.secretHash),
        expiresAt: now + CACHE_TTL_MS,
        principal: { kind: 'api_key', tenantId: row.tenantId, apiKeyId: row.id, scopes: row.scopes as ApiKeyScope[] },
      };
      this.cache.set(prefix, cached);
    }
    if (cached.hash.length !== hash.length || !timingSafeEqual(cached.hash, hash)) return null;
    this.touch(cached.principal.apiKeyId as string, now);
    return cached.principal;
  }

  private touch(id: string, now: number): void {
    const last = this.touched.get(id) ?? 0;
    if (now - last < TOUCH_EVERY_MS) return;
    this.touched.set(id, now);
    void this.keys
      .touch({ id, at: new Date(now) })
      .catch(ignoreFailure('recording an API key use', 'last_used_at is informational; a use a minute later writes it again'));
  }

  /** The operator token sees every tenant's keys; everyone else only their own. */
  private scopeOf(caller: Principal): string | null {
    return caller.kind === 'operator' || caller.kind === 'local_operator' ? null : caller.tenantId;
  }
}
