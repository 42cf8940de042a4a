import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import type { Principal } from '@core/context/request-context';
import { AppConfig } from '@core/config/app-config';
import { MODEL_CALL_ROUTE } from '@core/http/model-call-route.decorator';
import { rootLogger } from '@core/logging/logger';
import { RedisConnections } from '@core/redis/redis-connections';
import { RateLimitExceededError } from './gateway.errors';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the bucket is full again. */
  reset: number;
  retryAfterS: number;
}

// Token bucket in one atomic script (server time, so every api process agrees). KEYS[1]; ARGV: capacity,
// refill per ms, cost. Returns {allowed, tokens*1000, now_ms}.
const TOKEN_BUCKET_LUA = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(s[1])
local ts = tonumber(s[2])
if tokens == nil then tokens = cap; ts = now end
tokens = math.min(cap, tokens + math.max(0, now - ts) * rate)
local allowed = 1
if cost > 0 then
  if tokens >= cost then tokens = tokens - cost else allowed = 0 end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
return {allowed, math.floor(tokens * 1000), now}
`;

const DISABLED_HEADERS = { 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0' };
/** Routes that call a provider, so each request spends a token: the completions, and counting (a tenant could otherwise drive unmetered upstream calls). */
const COMPLETION_PATHS = new Set(['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/messages/count_tokens']);
const MAX_LOCAL_BUCKETS = 10_000;

type PreParsingDone = (err: Error | null, payload?: RequestPayload) => void;

/** The bucket of an authenticated caller: its API key's id, the operator token's, or the local operator's. */
export function bucketOf(principal: Principal | undefined): string {
  if (principal?.kind === 'api_key' && principal.apiKeyId) return `key_${principal.apiKeyId}`;
  if (principal?.kind === 'operator') return 'operator';
  return 'global';
}

type RedisWithBucket = { hecateTokenBucket(key: string, cap: number, rate: number, cost: number): Promise<[number, number, number]> };

/**
 * Gateway rate limit (GATEWAY_RATE_LIMIT_RPM / _BURST): a token bucket per authenticated caller (the API key's id,
 * the operator token, or the local operator), taken after authentication so a presented key prefix without its
 * secret spends nothing. Keyed by the matched route, not the raw URL. Cluster-wide through Redis in scaled mode,
 * in-process in embedded mode. Every /v1 response carries X-RateLimit-Limit/Remaining/Reset (zeros when off), and so
 * does a product route marked @ModelCallRoute (input optimisation); only completion requests and those routes consume
 * a token (a request refused with 401/404 carries no rate-limit headers).
 */
@Injectable()
export class RateLimiterService implements OnModuleInit {
  private readonly local = new Map<string, { tokens: number; ts: number }>();
  private redisDown = false;

  constructor(
    private readonly config: AppConfig,
    @Optional() @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost | null,
    @Optional() @Inject(RedisConnections) private readonly redis: RedisConnections | null,
  ) {}

  onModuleInit(): void {
    if (this.redis) {
      this.redis.command.defineCommand('hecateTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
    }
    const fastify = this.adapterHost?.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (!fastify || typeof fastify.addHook !== 'function') return;
    // preParsing runs after every onRequest hook, so after authentication (a request with a bogus credential was
    // answered 401 there and spends nobody's bucket), and still before the body is read.
    fastify.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: PreParsingDone) => {
      const route = request.routeOptions.url;
      const modelCall = request.routeOptions.config?.[MODEL_CALL_ROUTE] === true;
      if (!route?.startsWith('/v1/') && !modelCall) return done(null, payload);
      const { enabled } = this.config.gateway.rateLimit;
      if (!enabled) {
        void reply.headers(DISABLED_HEADERS);
        return done(null, payload);
      }
      const cost = request.method === 'POST' && (modelCall || COMPLETION_PATHS.has(route ?? '')) ? 1 : 0;
      this.take(bucketOf(request.hecate?.principal), cost).then(
        (d) => {
          void reply
            .header('x-ratelimit-limit', String(d.limit))
            .header('x-ratelimit-remaining', String(d.remaining))
            .header('x-ratelimit-reset', String(d.reset));
          if (d.allowed) done(null, payload);
          else done(new RateLimitExceededError(d.retryAfterS));
        },
        () => done(null, payload),
      );
    });
  }

  async take(key: string, cost: number): Promise<RateDecision> {
    const { rpm, burst } = this.config.gateway.rateLimit;
    const ratePerMs = rpm / 60_000;
    if (this.redis && this.redis.command.status === 'ready') {
      try {
        const [allowed, milli, now] = await (this.redis.command as unknown as RedisWithBucket).hecateTokenBucket(
          `${this.config.redis.prefix}:ratelimit:${key}`,
          burst,
          ratePerMs,
          cost,
        );
        this.redisDown = false;
        return this.decision(allowed === 1, milli / 1000, now);
      } catch (err) {
        if (!this.redisDown)
          rootLogger().warn({ err: err instanceof Error ? err.message : String(err) }, 'rate limiter: Redis unavailable; limiting in-process meanwhile');
        this.redisDown = true;
      }
    }
    return this.takeLocal(key, cost, burst, ratePerMs);
  }

  private takeLocal(key: string, cost: number, cap: number, ratePerMs: number): RateDecision {
    const now = Date.now();
    let b = this.local.get(key);
    if (!b) {
      if (this.local.size >= MAX_LOCAL_BUCKETS) this.local.delete(this.local.keys().next().value as string);
      b = { tokens: cap, ts: now };
      this.local.set(key, b);
    }
    b.tokens = Math.min(cap, b.tokens + Math.max(0, now - b.ts) * ratePerMs);
    b.ts = now;
    let allowed = true;
    if (cost > 0) {
      if (b.tokens >= cost) b.tokens -= cost;
      else allowed = false;
    }
    return this.decision(allowed, b.tokens, now);
  }

  private decision(allowed: boolean, tokens: number, nowMs: number): RateDecision {
    const { rpm, burst } = this.config.gateway.rateLimit;
    const ratePerMs = rpm / 60_000;
    return {
      allowed,
      limit: rpm,
      remaining: Math.max(0, Math.floor(tokens)),
      reset: Math.ceil((nowMs + (burst - tokens) / ratePerMs) / 1000),
      retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / ratePerMs / 1000)),
    };
  }
}
