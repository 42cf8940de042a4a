import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Type } from 'class-transformer';
import { QUEUE_NAMES } from '@contracts/jobs';
import { bool, csv, IsBooleanString } from '../config-validators';

/** Process, storage, queue, auth and telemetry variables (docs/configuration.md). */
export class PlatformEnv {
  @IsOptional() @IsString() HOST?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535) PORT?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(65535) WORKER_HEALTH_PORT?: number;
  @IsOptional()
  @Matches(/^[a-z_,\s-]*$/, { message: 'WORKER_QUEUES must be a comma-separated list of queue names' })
  WORKER_QUEUES?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_SHUTDOWN_GRACE_MS?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1000) GATEWAY_QUEUE_LOCK_MS?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) GATEWAY_TASK_QUEUE_WORKERS?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_BODY_LIMIT_BYTES?: number;

  @IsOptional() @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' }) DATABASE_URL?: string;
  @IsOptional() @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' }) REDIS_URL?: string;
  @IsOptional() @IsString() GATEWAY_DATA_DIR?: string;
  @IsOptional() @IsBooleanString() GATEWAY_MIGRATE_ON_BOOT?: string;
  @IsOptional() @IsBooleanString() GATEWAY_REDIS_ALLOW_EVICTION_POLICY?: string;
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'GATEWAY_REDIS_PREFIX must be 1-64 letters, digits, _ or -' })
  GATEWAY_REDIS_PREFIX?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_DB_POOL_SIZE?: number;

  @IsOptional() @IsString() GATEWAY_AUTH_TOKEN?: string;
  @IsOptional() @IsBooleanString() GATEWAY_ALLOW_INSECURE_BIND?: string;
  /** Extra `Host` names (or host:port) accepted without a token, besides the loopback ones (core/http/browser-edge.ts). */
  @IsOptional() @IsString() GATEWAY_ALLOWED_HOSTS?: string;
  /** Browser origins (`scheme://host[:port]`) accepted in `Origin` besides the server's own. */
  @IsOptional() @IsString() GATEWAY_ALLOWED_ORIGINS?: string;
  /** Browser origins whose pages may call the API (CORS: preflights answered, responses readable); accepted in `Origin` too. */
  @IsOptional() @IsString() GATEWAY_CORS_ORIGINS?: string;
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/=_-]{32,}$/, { message: 'GATEWAY_SECRET_KEY must be a base64 or hex key of at least 32 bytes' })
  GATEWAY_SECRET_KEY?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_LIVE_STREAM_TTL_SECONDS?: number;

  @IsOptional() @Matches(/^https?:\/\//, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' }) OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @IsOptional() @IsString() OTEL_SERVICE_NAME?: string;
  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL?: string;
  /** `pretty` (readable lines; the default on a terminal) or `json` (the default otherwise). */
  @IsOptional() @IsIn(['pretty', 'json']) GATEWAY_LOG_FORMAT?: string;
}

export type StorageMode = 'embedded' | 'scaled';

export interface PlatformConfig {
  mode: StorageMode;
  server: {
    host: string;
    port: number;
    workerHealthPort: number;
    shutdownGraceMs: number;
    bodyLimitBytes: number;
  };
  database: { url: string | undefined; dataDir: string; migrateOnBoot: boolean; poolSize: number };
  redis: { url: string | undefined; allowEvictionPolicy: boolean; prefix: string };
  queue: { workerQueues: string[]; lockDurationMs: number; concurrency: number };
  auth: {
    token: string | undefined;
    allowInsecureBind: boolean;
    secretKey: string | undefined;
    allowedHosts: string[];
    allowedOrigins: string[];
    corsOrigins: string[];
  };
  liveStreams: { ttlSeconds: number };
  telemetry: { otlpEndpoint: string | undefined; serviceName: string; logLevel: string; logFormat: 'pretty' | 'json' };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
export const isLoopbackHost = (host: string): boolean => LOOPBACK.has(host) || host.startsWith('127.');

const isOrigin = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.toLowerCase().replace(/\/+$/, '');
  } catch {
    return false;
  }
};

/** Cross-field checks that class-validator cannot express; each message names its variables. */
export function checkPlatformEnv(env: PlatformEnv): string[] {
  const problems: string[] = [];
  if (Boolean(env.DATABASE_URL) !== Boolean(env.REDIS_URL)) {
    const missing = env.DATABASE_URL ? 'REDIS_URL' : 'DATABASE_URL';
    problems.push(
      `${missing}: scaled mode needs both DATABASE_URL and REDIS_URL; embedded mode needs neither (only ${missing === 'REDIS_URL' ? 'DATABASE_URL' : 'REDIS_URL'} is set)`,
    );
  }
  const host = env.HOST ?? '127.0.0.1';
  if (!env.GATEWAY_AUTH_TOKEN && !isLoopbackHost(host) && !bool(env.GATEWAY_ALLOW_INSECURE_BIND, false)) {
    problems.push(`HOST: refusing to bind ${host} without GATEWAY_AUTH_TOKEN; set GATEWAY_AUTH_TOKEN or GATEWAY_ALLOW_INSECURE_BIND=true`);
  }
  for (const name of ['GATEWAY_ALLOWED_ORIGINS', 'GATEWAY_CORS_ORIGINS'] as const) {
    for (const origin of csv(env[name], [])) {
      if (!isOrigin(origin)) problems.push(`${name}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], nothing after it)`);
    }
  }
  const unknownQueues = csv(env.WORKER_QUEUES, []).filter((q) => !(QUEUE_NAMES as readonly string[]).includes(q));
  if (unknownQueues.length > 0) {
    problems.push(`WORKER_QUEUES: unknown queue(s) ${unknownQueues.join(', ')}; known: ${QUEUE_NAMES.join(', ')}`);
  }
  return problems;
}

export function platformConfig(env: PlatformEnv): PlatformConfig {
  return {
    mode: env.DATABASE_URL && env.REDIS_URL ? 'scaled' : 'embedded',
    server: {
      host: env.HOST ?? '127.0.0.1',
      port: env.PORT ?? 8765,
      workerHealthPort: env.WORKER_HEALTH_PORT ?? 8766,
      shutdownGraceMs: env.GATEWAY_SHUTDOWN_GRACE_MS ?? 25_000,
      bodyLimitBytes: env.GATEWAY_BODY_LIMIT_BYTES ?? 32 * 1024 * 1024,
    },
    database: {
      url: env.DATABASE_URL,
      dataDir: env.GATEWAY_DATA_DIR ?? '.data',
      migrateOnBoot: bool(env.GATEWAY_MIGRATE_ON_BOOT, false),
      poolSize: env.GATEWAY_DB_POOL_SIZE ?? 10,
    },
    redis: {
      url: env.REDIS_URL,
      allowEvictionPolicy: bool(env.GATEWAY_REDIS_ALLOW_EVICTION_POLICY, false),
      prefix: env.GATEWAY_REDIS_PREFIX ?? 'hecate',
    },
    queue: {
      workerQueues: csv(env.WORKER_QUEUES, [...QUEUE_NAMES]),
      lockDurationMs: env.GATEWAY_QUEUE_LOCK_MS ?? 30_000,
      concurrency: env.GATEWAY_TASK_QUEUE_WORKERS ?? 4,
    },
    auth: {
      token: env.GATEWAY_AUTH_TOKEN || undefined,
      allowInsecureBind: bool(env.GATEWAY_ALLOW_INSECURE_BIND, false),
      secretKey: env.GATEWAY_SECRET_KEY,
      allowedHosts: csv(env.GATEWAY_ALLOWED_HOSTS, []).map((h) => h.toLowerCase()),
      allowedOrigins: csv(env.GATEWAY_ALLOWED_ORIGINS, []).map(normalOrigin),
      corsOrigins: csv(env.GATEWAY_CORS_ORIGINS, []).map(normalOrigin),
    },
    liveStreams: { ttlSeconds: env.GATEWAY_LIVE_STREAM_TTL_SECONDS ?? 3600 },
    telemetry: {
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: env.OTEL_SERVICE_NAME ?? 'hecate',
      logLevel: env.LOG_LEVEL ?? 'info',
      // A person at a terminal gets readable lines (GATEWAY_LOG_FORMAT=json keeps JSON there too); anything else, JSON.
      logFormat: (env.GATEWAY_LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json')) as 'pretty' | 'json',
    },
  };
}

const normalOrigin = (origin: string): string => origin.toLowerCase().replace(/\/+$/, '');
