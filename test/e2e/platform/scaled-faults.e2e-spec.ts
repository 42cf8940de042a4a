import { Redis } from 'ioredis';
import { createScratchDatabase, ScratchDatabase, sql, startPrivateRedis, testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import { runMigrate, ServerProcess, startServer } from '../../support/server-process';
import { auth, OPERATOR_TOKEN } from './platform-checks';

const headers = { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json' };

async function createProbe(apiUrl: string, sleepMs: number): Promise<{ status: number; id?: string; body: Record<string, unknown> }> {
  const res = await fetch(`${apiUrl}/hecate/v1/system/queue-probes`, { method: 'POST', headers, body: JSON.stringify({ sleep_ms: sleepMs }) });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, id: (body.data as { id?: string } | undefined)?.id, body };
}

const probeRow = async (dbUrl: string, id: string) =>
  (
    await sql<{ status: string; attempts: number; worker: string | null }>(dbUrl, 'SELECT status, attempts, worker FROM system_queue_probes WHERE id = $1', [
      id,
    ])
  )[0];

describe('scaled mode under faults', () => {
  let db: ScratchDatabase;
  let env: Record<string, string>;
  const started: ServerProcess[] = [];
  const start = async (role: 'api' | 'worker', extra: Record<string, string> = {}) => {
    const s = await startServer(role, { ...env, ...extra });
    started.push(s);
    return s;
  };

  beforeAll(async () => {
    db = await createScratchDatabase();
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: testRedisUrl(),
      GATEWAY_REDIS_PREFIX: uniqueId('f'),
      GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN,
      GATEWAY_QUEUE_LOCK_MS: '2000',
      GATEWAY_SHUTDOWN_GRACE_MS: '10000',
    };
    expect((await runMigrate(env)).code).toBe(0);
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop('SIGKILL')));
    await db?.drop();
  });

  it('loses no job when a worker is killed with SIGKILL mid-job: another worker gets it', async () => {
    const api = await start('api');
    const doomed = await start('worker');
    const probe = await createProbe(api.url, 60_000);
    await waitFor(async () => (await probeRow(db.url, probe.id!))?.status === 'running', { what: 'job running on the first worker' });
    expect((await probeRow(db.url, probe.id!)).worker).toMatch(new RegExp(`:${doomed.proc.pid}$`));
    await doomed.stop('SIGKILL');

    const survivor = await start('worker');
    const redelivered = await waitFor(
      async () => {
        const row = await probeRow(db.url, probe.id!);
        return row.attempts >= 2 ? row : undefined;
      },
      { timeoutMs: 30_000, what: 'redelivery to the second worker' },
    );
    expect(redelivered.worker).toMatch(new RegExp(`:${survivor.proc.pid}$`));
    await survivor.stop('SIGKILL');
  });

  it('drains in-flight jobs on SIGTERM, then exits 0', async () => {
    const api = await start('api');
    const worker = await start('worker');
    const probe = await createProbe(api.url, 1500);
    await waitFor(async () => (await probeRow(db.url, probe.id!))?.status === 'running', { what: 'job running' });
    const code = await worker.stop('SIGTERM');
    expect(code).toBe(0);
    expect(await probeRow(db.url, probe.id!)).toMatchObject({ status: 'completed', attempts: 1 });
    expect(worker.output()).toContain('worker stopped');
  });

  it('answers 503 fast when Redis is down, and keeps nothing half-written', async () => {
    const privateRedis = await startPrivateRedis();
    const api = await start('api', { REDIS_URL: privateRedis.url });
    await privateRedis.stop();
    const notReady = await waitFor(
      async () => {
        const res = await fetch(`${api.url}/readyz`);
        return res.status === 503 ? ((await res.json()) as { status: string; error: Record<string, unknown> }) : undefined;
      },
      { what: 'readiness to notice' },
    );
    expect(notReady.status).toBe('error');
    expect(Object.keys(notReady.error)).toContain('redis');
    const before = await sql<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM system_queue_probes');
    const probe = await createProbe(api.url, 0);
    expect(probe.status).toBe(503);
    expect(probe.body.error).toMatchObject({ type: 'service_unavailable', user_message: expect.any(String), operator_action: expect.any(String) });
    const after = await sql<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM system_queue_probes');
    expect(after[0].n).toBe(before[0].n);
    // The api process itself stays up.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  });
});

describe('scaled startup guards', () => {
  let db: ScratchDatabase;
  beforeEach(async () => (db = await createScratchDatabase()));
  afterEach(() => db.drop());

  const base = () => ({ DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), GATEWAY_REDIS_PREFIX: uniqueId('g'), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN });

  it('refuses to start the api or the worker with pending migrations', async () => {
    for (const role of ['api', 'worker'] as const) {
      const s = await startServer(role, base(), { waitHealthy: false });
      expect((await s.exited).code).toBe(1);
      expect(s.output()).toMatch(/pending migration\(s\): PlatformFoundation\d+.*npm run migrate/);
    }
  });

  it('migrates on boot under an advisory lock when two pods start at once', async () => {
    const env = { ...base(), GATEWAY_MIGRATE_ON_BOOT: 'true' };
    const [a, b] = await Promise.all([startServer('api', env), startServer('api', env)]);
    try {
      const rows = await sql<{ name: string }>(db.url, 'SELECT name FROM schema_migrations');
      const names = rows.map((r) => r.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('names every bad variable and exits 1', async () => {
    const s = await startServer('api', { ...base(), PORT: 'eighty', LOG_LEVEL: 'loud' }, { waitHealthy: false });
    expect((await s.exited).code).toBe(1);
    expect(s.output()).toMatch(/PORT:/);
    expect(s.output()).toMatch(/LOG_LEVEL:/);
  });

  it('explains that scaled mode needs both DATABASE_URL and REDIS_URL', async () => {
    const s = await startServer('api', { DATABASE_URL: db.url }, { waitHealthy: false });
    expect((await s.exited).code).toBe(1);
    expect(s.output()).toContain('REDIS_URL: scaled mode needs both DATABASE_URL and REDIS_URL');
  });

  it('refuses a Redis whose maxmemory-policy is not noeviction, unless overridden', async () => {
    const privateRedis = await startPrivateRedis();
    try {
      const admin = new Redis(privateRedis.url);
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      admin.disconnect();
      const env = { ...base(), REDIS_URL: privateRedis.url, GATEWAY_MIGRATE_ON_BOOT: 'true' };
      const refused = await startServer('api', env, { waitHealthy: false });
      expect((await refused.exited).code).toBe(1);
      expect(refused.output()).toContain('maxmemory-policy is "allkeys-lru"');
      const allowed = await startServer('api', { ...env, GATEWAY_REDIS_ALLOW_EVICTION_POLICY: 'true' });
      expect(allowed.output()).toContain('WARNING');
      await allowed.stop();
    } finally {
      await privateRedis.stop();
    }
  });
});
