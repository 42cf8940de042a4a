import { Redis } from 'ioredis';
import type { AppConfigValues } from '@core/config/config.loader';
import { createDataSource } from '@core/database/data-source.factory';
import { pendingMigrations } from '@core/database/migrator';
import { evictionPolicy } from '@core/redis/redis-connections';
// The preset catalog is a data file with no imports of its own; the providers module's index.ts would load Nest and
// every provider service for it (over a second of a `doctor` run).
import { presetById } from '@modules/providers/provider-presets';
import { redactUrl } from './cli-common';
import type { CheckResult } from './doctor-host';

const TIMEOUT_MS = 5000;
const reason = (err: unknown): string => {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.message ?? String(err);
};

/** Postgres at DATABASE_URL: it answers, and its migrations are current (the api and worker refuse to start otherwise). */
export async function checkPostgres(config: AppConfigValues): Promise<CheckResult[]> {
  const url = config.database.url as string;
  const where = redactUrl(url);
  const dataSource = await createDataSource({ url, dataDir: config.database.dataDir, poolSize: 1, entities: [], applicationName: 'hecate-doctor' });
  try {
    await dataSource.initialize();
  } catch (err) {
    return [
      {
        status: 'fail',
        check: 'postgres',
        detail: `${where} does not answer (${reason(err)})`,
        fix: 'start Postgres (>= 15) or fix DATABASE_URL: host, port, user, password, database name',
      },
    ];
  }
  try {
    const [{ server_version: version }] = (await dataSource.query('SHOW server_version')) as { server_version: string }[];
    const results: CheckResult[] = [{ status: 'ok', check: 'postgres', detail: `${where} answers (PostgreSQL ${version})` }];
    const pending = await pendingMigrations(dataSource);
    if (pending.length === 0) results.push({ status: 'ok', check: 'migrations', detail: `all ${dataSource.migrations.length} applied` });
    else if (config.database.migrateOnBoot) {
      results.push({ status: 'ok', check: 'migrations', detail: `${pending.length} pending, applied when a server starts (GATEWAY_MIGRATE_ON_BOOT)` });
    } else {
      results.push({
        status: 'fail',
        check: 'migrations',
        detail: `${pending.length} pending: the api and worker refuse to start`,
        fix: 'run `npx hecate migrate` (or set GATEWAY_MIGRATE_ON_BOOT=true)',
      });
    }
    return results;
  } finally {
    await dataSource.destroy();
  }
}

/** Redis at REDIS_URL: it answers, and it never evicts keys (an evicted job is a lost run). */
export async function checkRedis(config: AppConfigValues): Promise<CheckResult[]> {
  const where = redactUrl(config.redis.url as string);
  const client = new Redis(config.redis.url as string, {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectionName: 'hecate-doctor',
  });
  // connect() rejects with "Connection is closed."; the cause (ECONNREFUSED, WRONGPASS, …) comes as an 'error' event.
  let cause: unknown;
  client.on('error', (err) => (cause ??= err));
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    return [
      {
        status: 'fail',
        check: 'redis',
        detail: `${where} does not answer (${reason(cause ?? err)})`,
        fix: 'start Redis or fix REDIS_URL: host, port, password',
      },
    ];
  }
  const override = 'or GATEWAY_REDIS_ALLOW_EVICTION_POLICY=true for a managed Redis that hides or fixes it';
  try {
    const policy = await evictionPolicy(client);
    if (policy === 'noeviction') return [{ status: 'ok', check: 'redis', detail: `${where} answers, maxmemory-policy noeviction` }];
    return [
      {
        status: config.redis.allowEvictionPolicy ? 'warn' : 'fail',
        check: 'redis',
        detail: `${where} has maxmemory-policy ${policy}; queues and live streams need noeviction${config.redis.allowEvictionPolicy ? ' (allowed by GATEWAY_REDIS_ALLOW_EVICTION_POLICY)' : ''}`,
        fix: `run \`CONFIG SET maxmemory-policy noeviction\` on it and put \`maxmemory-policy noeviction\` in redis.conf, ${override}`,
      },
    ];
  } catch (err) {
    return [
      {
        status: config.redis.allowEvictionPolicy ? 'warn' : 'fail',
        check: 'redis',
        detail: `${where} answers but hides maxmemory-policy (${reason(err)})`,
        fix: `make sure it runs with maxmemory-policy noeviction, ${override}`,
      },
    ];
  } finally {
    client.disconnect();
  }
}

/** Each provider of the environment (PROVIDER_<NAME>_*): a base URL (its own or its preset's) that answers HTTP. */
export async function checkProviders(config: AppConfigValues): Promise<CheckResult[]> {
  const specs = config.gateway.providers;
  if (specs.length === 0) {
    return [
      {
        status: 'warn',
        check: 'providers',
        detail: 'none configured in the environment',
        fix: 'set PROVIDER_<NAME>_API_KEY for a preset (openai, anthropic, …) or PROVIDER_<NAME>_BASE_URL, or add one in the console (/providers)',
      },
    ];
  }
  return Promise.all(
    specs.map(async (spec): Promise<CheckResult> => {
      const check = `provider:${spec.name}`;
      const env = `PROVIDER_${spec.name.toUpperCase()}`;
      const preset = presetById(spec.name);
      const baseUrl = spec.baseUrl ?? preset?.baseUrl;
      if (!baseUrl) return { status: 'fail', check, detail: `${env}_BASE_URL is unset and ${spec.name} is not a preset`, fix: `set ${env}_BASE_URL` };
      let status: number;
      try {
        status = (await fetch(baseUrl, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) })).status;
      } catch (err) {
        return {
          status: 'fail',
          check,
          detail: `${baseUrl} does not answer (${reason(err)})`,
          fix: `start it or fix ${env}_BASE_URL; check DNS, proxy and firewall between this host and it`,
        };
      }
      if ((spec.kind ?? preset?.kind) === 'cloud' && !spec.apiKey) {
        return { status: 'warn', check, detail: `${baseUrl} answers (HTTP ${status}) but no API key is set`, fix: `set ${env}_API_KEY` };
      }
      return { status: 'ok', check, detail: `${baseUrl} answers (HTTP ${status})` };
    }),
  );
}
