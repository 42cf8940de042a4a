import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Type } from 'class-transformer';
import { bool, duration, IsBooleanString, IsDuration } from '../config-validators';

/**
 * Gateway variables: routing, retries, circuit breaker, rate limit, upstream timeouts, ledger and
 * traces. `PROVIDER_<NAME>_*` variables are dynamic and read from the same env object (see `envProviders`).
 */
export class GatewayEnv {
  @IsOptional() @IsString() GATEWAY_DEFAULT_MODEL?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10) GATEWAY_PROVIDER_MAX_ATTEMPTS?: number;
  @IsOptional() @IsDuration() GATEWAY_PROVIDER_RETRY_BACKOFF?: string;
  @IsOptional() @IsBooleanString() GATEWAY_PROVIDER_FAILOVER_ENABLED?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) GATEWAY_PROVIDER_HEALTH_FAILURE_THRESHOLD?: number;
  @IsOptional() @IsDuration() GATEWAY_PROVIDER_COOLDOWN?: string;
  @IsOptional() @IsDuration() GATEWAY_PROVIDER_LATENCY_DEGRADED_THRESHOLD?: string;
  @IsOptional() @IsBooleanString() GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS?: string;

  @IsOptional() @IsDuration() GATEWAY_UPSTREAM_CONNECT_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_UPSTREAM_FIRST_BYTE_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_UPSTREAM_IDLE_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_MODEL_DISCOVERY_TTL?: string;

  @IsOptional() @IsBooleanString() GATEWAY_RATE_LIMIT_ENABLED?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_RATE_LIMIT_RPM?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RATE_LIMIT_BURST?: number;

  @IsOptional() @IsDuration() GATEWAY_USAGE_FLUSH_INTERVAL?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(100) GATEWAY_USAGE_BUFFER_MAX?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(10) GATEWAY_TRACES_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_TRACES_MAX_AGE?: string;
  /** Spend budgets (docs/budgets.md): how long a call's reservation holds if its process dies unsettled, and how often workers give such ones back. */
  @IsOptional() @IsDuration() GATEWAY_BUDGET_RESERVATION_TTL?: string;
  @IsOptional() @IsDuration() GATEWAY_BUDGET_SWEEP_INTERVAL?: string;
}

export type ProviderProtocol = 'openai' | 'anthropic';
export type ProviderKind = 'cloud' | 'local';

/** One `PROVIDER_<NAME>_*` group; fields left undefined fall back to the preset of the same name. */
export interface EnvProviderSpec {
  name: string;
  baseUrl?: string;
  apiKey?: string;
  defaultModel?: string;
  protocol?: ProviderProtocol;
  kind?: ProviderKind;
}

export interface GatewayConfig {
  defaultModel: string | undefined;
  maxAttempts: number;
  retryBackoffMs: number;
  failoverEnabled: boolean;
  failureThreshold: number;
  cooldownMs: number;
  latencyDegradedMs: number;
  allowPrivateProviderUrls: boolean;
  timeouts: { connectMs: number; firstByteMs: number; idleMs: number };
  discoveryTtlMs: number;
  rateLimit: { enabled: boolean; rpm: number; burst: number };
  usage: { flushIntervalMs: number; bufferMax: number };
  traces: { maxCount: number; maxAgeMs: number };
  budgets: { reservationTtlMs: number; sweepIntervalMs: number };
  providers: EnvProviderSpec[];
}

const PROVIDER_VAR = /^PROVIDER_([A-Z0-9_]+?)_(BASE_URL|API_KEY|DEFAULT_MODEL|PROTOCOL|KIND)$/;

/** Groups `PROVIDER_<NAME>_<FIELD>` variables by name (the provider's name is `<NAME>` lower-cased). */
export function envProviders(env: object): EnvProviderSpec[] {
  const byName = new Map<string, EnvProviderSpec>();
  for (const [key, raw] of Object.entries(env as Record<string, unknown>)) {
    const match = PROVIDER_VAR.exec(key);
    if (!match || typeof raw !== 'string' || raw.trim() === '') continue;
    const name = match[1].toLowerCase();
    const spec = byName.get(name) ?? { name };
    const value = raw.trim();
    if (match[2] === 'BASE_URL') spec.baseUrl = value.replace(/\/+$/, '');
    else if (match[2] === 'API_KEY') spec.apiKey = value;
    else if (match[2] === 'DEFAULT_MODEL') spec.defaultModel = value;
    else if (match[2] === 'PROTOCOL') spec.protocol = value.toLowerCase() as ProviderProtocol;
    else spec.kind = value.toLowerCase() as ProviderKind;
    byName.set(name, spec);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function checkGatewayEnv(env: GatewayEnv): string[] {
  const problems: string[] = [];
  for (const spec of envProviders(env)) {
    const prefix = `PROVIDER_${spec.name.toUpperCase()}`;
    if (spec.protocol && spec.protocol !== 'openai' && spec.protocol !== 'anthropic') {
      problems.push(`${prefix}_PROTOCOL: must be openai or anthropic`);
    }
    if (spec.kind && spec.kind !== 'cloud' && spec.kind !== 'local') problems.push(`${prefix}_KIND: must be cloud or local`);
    if (spec.baseUrl) {
      let url: URL | undefined;
      try {
        url = new URL(spec.baseUrl);
      } catch {
        problems.push(`${prefix}_BASE_URL: must be an http(s) URL`);
      }
      if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`${prefix}_BASE_URL: must be an http(s) URL`);
      if (url && (url.username || url.password)) problems.push(`${prefix}_BASE_URL: must not embed credentials; use ${prefix}_API_KEY`);
    }
    if (!/^[a-z0-9][a-z0-9_]*$/.test(spec.name)) problems.push(`${prefix}_*: provider names use letters, digits and _`);
  }
  return problems;
}

export function gatewayConfig(env: GatewayEnv): GatewayConfig {
  const rpm = env.GATEWAY_RATE_LIMIT_RPM ?? 60;
  return {
    defaultModel: env.GATEWAY_DEFAULT_MODEL?.trim() || undefined,
    maxAttempts: env.GATEWAY_PROVIDER_MAX_ATTEMPTS ?? 2,
    retryBackoffMs: duration(env.GATEWAY_PROVIDER_RETRY_BACKOFF, 200),
    failoverEnabled: bool(env.GATEWAY_PROVIDER_FAILOVER_ENABLED, true),
    failureThreshold: env.GATEWAY_PROVIDER_HEALTH_FAILURE_THRESHOLD ?? 3,
    cooldownMs: duration(env.GATEWAY_PROVIDER_COOLDOWN, 30_000),
    latencyDegradedMs: duration(env.GATEWAY_PROVIDER_LATENCY_DEGRADED_THRESHOLD, 0),
    allowPrivateProviderUrls: bool(env.GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS, false),
    timeouts: {
      connectMs: duration(env.GATEWAY_UPSTREAM_CONNECT_TIMEOUT, 10_000),
      firstByteMs: duration(env.GATEWAY_UPSTREAM_FIRST_BYTE_TIMEOUT, 120_000),
      idleMs: duration(env.GATEWAY_UPSTREAM_IDLE_TIMEOUT, 60_000),
    },
    discoveryTtlMs: duration(env.GATEWAY_MODEL_DISCOVERY_TTL, 60_000),
    // Setting an RPM turns the limiter on unless GATEWAY_RATE_LIMIT_ENABLED says otherwise.
    rateLimit: {
      enabled: bool(env.GATEWAY_RATE_LIMIT_ENABLED, env.GATEWAY_RATE_LIMIT_RPM !== undefined),
      rpm,
      burst: env.GATEWAY_RATE_LIMIT_BURST || rpm,
    },
    usage: { flushIntervalMs: duration(env.GATEWAY_USAGE_FLUSH_INTERVAL, 1000), bufferMax: env.GATEWAY_USAGE_BUFFER_MAX ?? 50_000 },
    traces: { maxCount: env.GATEWAY_TRACES_MAX_COUNT ?? 2000, maxAgeMs: duration(env.GATEWAY_TRACES_MAX_AGE, 24 * 3_600_000) },
    budgets: {
      reservationTtlMs: duration(env.GATEWAY_BUDGET_RESERVATION_TTL, 15 * 60_000),
      sweepIntervalMs: duration(env.GATEWAY_BUDGET_SWEEP_INTERVAL, 30_000),
    },
    providers: envProviders(env),
  };
}
