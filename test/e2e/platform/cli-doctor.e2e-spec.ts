import { migratedPostgresTemplate } from '../../support/database';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { doctorLines, runCli } from '../../support/cli';
import { createScratchDatabase, freePort, ScratchDatabase, startPrivateRedis, testRedisUrl, type PrivateRedis } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';

/** A password the local Postgres (trust authentication) accepts and ignores: it must never be printed. */
const DB_PASSWORD = 'pg-Secret-4f9a1c';
const REDIS_PASSWORD = 'redis-Secret-77b2e0';

const withPassword = (url: string): string => {
  const u = new URL(url);
  u.password = DB_PASSWORD;
  return u.toString();
};

describe('hecate doctor', () => {
  let db: ScratchDatabase;
  let upstream: FakeUpstream;
  let evicting: PrivateRedis;
  let base: Record<string, string>;

  beforeAll(async () => {
    [db, upstream, evicting] = await Promise.all([
      migratedPostgresTemplate().then((template) => createScratchDatabase({ template })),
      startFakeUpstream(),
      startPrivateRedis({ policy: 'allkeys-lru', password: REDIS_PASSWORD }),
    ]);
    base = { DATABASE_URL: withPassword(db.url), REDIS_URL: testRedisUrl(), PORT: String(await freePort()), ...providerEnv('fake', upstream) };
  });
  afterAll(async () => {
    await Promise.all([db?.drop(), upstream?.close(), evicting?.stop()]);
  });

  it('reports every check ok against the local Postgres, Redis, bubblewrap and a provider, and exits 0', async () => {
    const { code, stdout, stderr } = await runCli(['doctor'], base);
    const lines = doctorLines(stdout);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    for (const check of ['node', 'mode', 'sandbox', 'postgres', 'migrations', 'redis', 'provider:fake', 'port']) {
      expect([check, lines.get(check)?.status]).toEqual([check, 'ok']);
    }
    expect(lines.get('redis')?.detail).toContain('noeviction');
    expect(lines.get('provider:fake')?.detail).toContain(`${upstream.url}/v1 answers (HTTP`);
    expect(lines.get('port')?.detail).toBe(`127.0.0.1:${base.PORT} is free`);
    expect(stdout).not.toMatch(/^fail/m);
    // The password is shown as *** wherever the URL is.
    expect(lines.get('postgres')?.detail).toContain(':***@127.0.0.1');
    expect(stdout).not.toContain(DB_PASSWORD);
  });

  it('fails on a Redis that does not answer, with the fix, and exits 1', async () => {
    const { code, stdout } = await runCli(['doctor'], { ...base, REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${await freePort()}` });
    const redis = doctorLines(stdout).get('redis');
    expect(code).toBe(1);
    expect(redis).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not answer (ECONNREFUSED)') });
    expect(redis?.fix).toContain('start Redis or fix REDIS_URL');
    expect(stdout).not.toContain(REDIS_PASSWORD);
    expect(stdout).not.toContain(DB_PASSWORD);
  });

  it('fails on a Redis whose maxmemory-policy evicts keys, with the fix; the override turns it into a warning', async () => {
    const failing = await runCli(['doctor'], { ...base, REDIS_URL: evicting.url });
    const redis = doctorLines(failing.stdout).get('redis');
    expect(failing.code).toBe(1);
    expect(redis).toMatchObject({ status: 'fail', detail: expect.stringContaining('maxmemory-policy allkeys-lru; queues and live streams need noeviction') });
    expect(redis?.fix).toContain('CONFIG SET maxmemory-policy noeviction');
    expect(failing.stdout).not.toContain(REDIS_PASSWORD);

    const overridden = await runCli(['doctor'], { ...base, REDIS_URL: evicting.url, GATEWAY_REDIS_ALLOW_EVICTION_POLICY: 'true' });
    expect(doctorLines(overridden.stdout).get('redis')?.status).toBe('warn');
    expect(overridden.code).toBe(0);
  });

  it('fails on an unreachable Postgres, a provider that does not answer and a port in use, without printing the password', async () => {
    const busy = upstream.port; // the fake upstream listens there
    const { code, stdout } = await runCli(['doctor'], {
      ...base,
      DATABASE_URL: `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${await freePort()}/hecate`,
      PORT: String(busy),
      ...providerEnv('gone', { url: `http://127.0.0.1:${await freePort()}` }),
    });
    const lines = doctorLines(stdout);
    expect(code).toBe(1);
    expect(lines.get('postgres')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('ECONNREFUSED'),
      fix: expect.stringContaining('DATABASE_URL'),
    });
    expect(lines.get('provider:gone')).toMatchObject({ status: 'fail', fix: expect.stringContaining('PROVIDER_GONE_BASE_URL') });
    expect(lines.get('port')).toMatchObject({ status: 'fail', detail: `127.0.0.1:${busy} is in use`, fix: expect.stringContaining('PORT') });
    expect(stdout).not.toContain(DB_PASSWORD);
  });

  it('reports a configuration the server would refuse, naming the variable', async () => {
    const { code, stdout } = await runCli(['doctor'], { REDIS_URL: testRedisUrl() });
    expect(code).toBe(1);
    expect(doctorLines(stdout).get('config')).toMatchObject({ status: 'fail', detail: expect.stringContaining('DATABASE_URL') });
  });
});
