import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { Redis } from 'ioredis';

/**
 * Real services for integration and e2e tests. TEST_DATABASE_URL points at a database the suite may use
 * to create and drop scratch databases; TEST_REDIS_URL at a Redis with maxmemory-policy noeviction.
 * Nothing is skipped: when a service is unreachable the test fails with a message saying which.
 */
export const testDatabaseUrl = (): string => process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

export const uniqueId = (prefix = 't'): string => `${prefix}${randomBytes(5).toString('hex')}`;

async function adminClient(): Promise<Client> {
  const client = new Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`Postgres is required (TEST_DATABASE_URL=${testDatabaseUrl()}): ${String(err)}`, { cause: err });
  }
  return client;
}

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** The URL of database `name` on the test server. */
export function databaseUrl(name: string): string {
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `fn` with a connection to the test server's admin database (TEST_DATABASE_URL), closed afterwards. */
export async function withAdmin<T>(fn: (admin: Client) => Promise<T>): Promise<T> {
  const admin = await adminClient();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/**
 * Creates a database for one test file — empty, or a copy of `template` (`CREATE DATABASE … TEMPLATE`); `drop()`
 * terminates its connections and removes it. Names start `hecate_t_`, which `.ci/run` drops when a run left them.
 */
export async function createScratchDatabase(opts: { template?: string } = {}): Promise<ScratchDatabase> {
  const name = uniqueId('hecate_t_');
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}${opts.template ? ` TEMPLATE ${opts.template}` : ''}`));
  return {
    url: databaseUrl(name),
    name,
    async drop() {
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Runs SQL against a scratch database (for assertions on rows). */
export async function sql<T = Record<string, unknown>>(databaseUrl: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Rows of every table of a scratch database whose text holds `needle` (`table: count` each): where a secret must not be. */
export async function rowsHolding(databaseUrl: string, needle: string): Promise<string[]> {
  const tables = await sql<{ table_name: string }>(
    databaseUrl,
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const hits: string[] = [];
  for (const { table_name: table } of tables) {
    const [{ n }] = await sql<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM "${table}" x WHERE x::text LIKE $1`, [`%${needle}%`]);
    if (Number(n) > 0) hits.push(`${table}: ${n}`);
  }
  return hits;
}

/** A Redis client for tests; throws a clear error when Redis is down. */
export async function redisClient(): Promise<Redis> {
  const client = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new Error(`Redis is required (TEST_REDIS_URL=${testRedisUrl()}): ${String(err)}`, { cause: err });
  }
  return client;
}

/** Waits for a condition by polling an observable (never a fixed sleep). */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 10_000, intervalMs = 25, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A throwaway redis-server on a free port (noeviction unless `policy` says otherwise, no persistence, a password when
 * given: its `url` carries it), for tests that stop, restart or `CLIENT KILL` Redis without disturbing the shared
 * instance, or that need a Redis configured wrong.
 */
export async function startPrivateRedis({ policy = 'noeviction', password }: { policy?: string; password?: string } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const url = `redis://${password ? `:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}`;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', policy];
  if (password) args.push('--requirepass', password);
  const start = async () => {
    proc = spawn('redis-server', args, { stdio: 'ignore' });
    await waitFor(
      async () => {
        const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } finally {
          probe.disconnect();
        }
      },
      { what: `private redis-server on ${port}`, timeoutMs: 10_000 },
    );
  };
  await start();
  return {
    url,
    port,
    start,
    async stop() {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc!.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
