import { createHash } from 'node:crypto';
import { createScratchDatabase, ScratchDatabase, sql, testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import { runMigrate, ServerProcess, startServer } from '../../support/server-process';
import { auth, createKey, describePlatformHttp, OPERATOR_TOKEN } from './platform-checks';

describe('scaled mode: api and worker as two processes on Postgres and Redis', () => {
  let db: ScratchDatabase;
  let api: ServerProcess;
  let worker: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createScratchDatabase();
    env = { DATABASE_URL: db.url, REDIS_URL: testRedisUrl(), GATEWAY_REDIS_PREFIX: uniqueId('p'), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN };
    const migrated = await runMigrate(env);
    expect(migrated.code).toBe(0);
    [api, worker] = await Promise.all([startServer('api', env), startServer('worker', env)]);
  });
  afterAll(async () => {
    const codes = await Promise.all([api?.stop('SIGTERM'), worker?.stop('SIGTERM')]);
    await db?.drop();
    expect(codes).toEqual([0, 0]);
  });

  describePlatformHttp(() => ({ url: api.url, logs: () => api.output() + worker.output() }));

  it('uses Postgres and BullMQ and sees the worker process', async () => {
    const body = (await (await fetch(`${api.url}/hecate/v1/system/stats`, { headers: auth(OPERATOR_TOKEN) })).json()) as { data: Record<string, unknown> };
    expect(body.data).toMatchObject({ queue_backend: 'bullmq', storage_backend: 'postgres' });
    expect(body.data.workers).toBeGreaterThanOrEqual(1);
  });

  it('runs queue probes on the worker process, not the api process', async () => {
    const res = await fetch(`${api.url}/hecate/v1/system/queue-probes`, {
      method: 'POST',
      headers: { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json' },
      body: '{}',
    });
    const { id } = ((await res.json()) as { data: { id: string } }).data;
    const worked = await waitFor(async () => {
      const [row] = await sql<{ status: string; worker: string }>(db.url, 'SELECT status, worker FROM system_queue_probes WHERE id = $1', [id]);
      return row?.status === 'completed' ? row : undefined;
    });
    expect(worked.worker.endsWith(`:${worker.proc.pid}`)).toBe(true);
  });

  it('stores API keys as SHA-256 hashes, never the secret', async () => {
    const { body } = await createKey({ url: api.url, logs: () => '' }, ['inference']);
    const rows = await sql<{ secret_hash: Buffer; prefix: string }>(db.url, 'SELECT secret_hash, prefix FROM api_keys WHERE id = $1', [body.data.id]);
    expect(rows[0].secret_hash.equals(createHash('sha256').update(body.data.secret).digest())).toBe(true);
    const dump = JSON.stringify(await sql(db.url, 'SELECT * FROM api_keys'));
    expect(dump).not.toContain(body.data.secret.slice(body.data.prefix.length + 1));
  });

  it("serves health and metrics on the worker's side port and nothing else", async () => {
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    const ready = (await (await fetch(`${worker.url}/readyz`)).json()) as { status: string; details: Record<string, { status: string }> };
    expect(ready).toMatchObject({ status: 'ok', details: { database: { status: 'up' }, redis: { status: 'up' }, queue: { status: 'up' } } });
    expect(await (await fetch(`${worker.url}/metrics`)).text()).toContain('hecate_queue_jobs');
    expect((await fetch(`${worker.url}/hecate/v1/system/stats`, { headers: auth(OPERATOR_TOKEN) })).status).toBe(404);
  });
});
