import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { MIGRATIONS } from '@migrations';
import { runCli, spawnCli } from '../../support/cli';
import { migratedEmbeddedDataDir } from '../../support/database';
import { queryEmbedded } from '../../support/embedded-db';
import { scaledStackEnv } from '../../support/harness';
import { createScratchDatabase, freePort, sql, waitFor } from '../../support/infra';
import { childEnv, embeddedEnv, ServerProcess, startServer } from '../../support/server-process';
import { auth, OPERATOR_TOKEN } from './platform-checks';

interface Caller {
  data: { kind: string; tenant_id: string; scopes: string[]; api_key_id: string | null };
}

const whoami = (url: string, secret: string) => fetch(`${url}/hecate/v1/whoami`, { headers: auth(secret) });
/** The same key with its last character changed: it has the right prefix and shape, and must not verify. */
const tampered = (secret: string) => `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;

describe('hecate CLI: usage', () => {
  it('prints usage for --help (exit 0) and for an unknown command (exit 2)', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: hecate <command>/);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage: hecate');
  });

  it('refuses a keys create without a tenant or with an unknown scope (exit 2, nothing created)', async () => {
    const noTenant = await runCli(['keys', 'create']);
    expect([noTenant.code, noTenant.stderr]).toEqual([2, expect.stringContaining('--tenant')]);
    const badScope = await runCli(['keys', 'create', '--tenant', 'acme', '--scopes', 'inference,root', '--json']);
    expect(badScope.code).toBe(2);
    expect(JSON.parse(badScope.stdout)).toMatchObject({ error: { type: 'invalid_request', message: expect.stringContaining('--scopes') } });
  });
});

describe('hecate migrate', () => {
  it('applies every migration to a fresh Postgres database, then nothing on a second run', async () => {
    const db = await createScratchDatabase();
    try {
      const first = await runCli(['migrate'], { DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379' });
      expect(first.code).toBe(0);
      const rows = await sql<{ name: string }>(db.url, 'SELECT name FROM schema_migrations ORDER BY id');
      expect(rows).toHaveLength(MIGRATIONS.length);
      const printed = first.stdout.split('\n').filter((l) => l.startsWith('applied  '));
      expect(printed.map((l) => l.slice('applied  '.length))).toEqual(rows.map((r) => r.name));
      expect(first.stdout).toContain(`${MIGRATIONS.length} migration(s) applied`);

      const second = await runCli(['migrate'], { DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379' });
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('nothing to apply: the database is up to date');
      expect(second.stdout).not.toContain('applied  ');
      expect(await sql(db.url, 'SELECT name FROM schema_migrations')).toHaveLength(MIGRATIONS.length);
    } finally {
      await db.drop();
    }
  });

  it('applies every migration to an empty embedded data directory', async () => {
    const env = embeddedEnv({ empty: true });
    const run = await runCli(['migrate'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${MIGRATIONS.length} migration(s) applied`);
    expect(await queryEmbedded(env.GATEWAY_DATA_DIR, 'SELECT name FROM schema_migrations')).toHaveLength(MIGRATIONS.length);
  });
});

describe('hecate keys create', () => {
  it('creates a key in Postgres that authenticates against a started server; a wrong key is 401', async () => {
    const { env, db } = await scaledStackEnv({ token: OPERATOR_TOKEN });
    let api: ServerProcess | undefined;
    try {
      const made = await runCli(['keys', 'create', '--tenant', 'acme', '--name', 'ci', '--scopes', 'operator,inference', '--json'], env);
      expect(made.code).toBe(0);
      const { data } = JSON.parse(made.stdout) as { data: { id: string; secret: string; tenant_id: string; scopes: string[]; name: string } };
      expect(data).toMatchObject({ tenant_id: 'acme', name: 'ci', scopes: ['operator', 'inference'], secret: expect.stringMatching(/^hk_/) });
      // Stored as the admin API stores it: a hash, never the secret.
      const [row] = await sql<{ tenant_id: string }>(db.url, 'SELECT tenant_id FROM api_keys WHERE id = $1', [data.id]);
      expect(row.tenant_id).toBe('acme');

      api = await startServer('api', env);
      const ok = await whoami(api.url, data.secret);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Caller).data).toMatchObject({ kind: 'api_key', tenant_id: 'acme', api_key_id: data.id });
      expect((await whoami(api.url, tampered(data.secret))).status).toBe(401);

      // Without --json the secret is stdout's only line, for `KEY=$(hecate keys create …)`.
      const plain = await runCli(['keys', 'create', '--tenant', 'acme'], env);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(/^hk_[A-Za-z0-9_-]+\n$/);
      expect(plain.stderr).toContain('for tenant acme, scopes inference');
      const models = await fetch(`${api.url}/v1/models`, { headers: auth(plain.stdout.trim()) });
      expect(models.status).toBe(200);
    } finally {
      const stopped = await api?.stop();
      await db.drop();
      if (api) expect(stopped).toBe(0);
    }
  });

  it('creates a key in an embedded data directory, and through the running embedded server while it holds it', async () => {
    const env = { GATEWAY_DATA_DIR: await migratedEmbeddedDataDir(), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN, PORT: String(await freePort()) };
    const offline = await runCli(['keys', 'create', '--tenant', 't-offline', '--scopes', 'operator'], env);
    expect(offline.code).toBe(0);
    const server = await startServer('all', env, { port: Number(env.PORT) });
    try {
      const online = await runCli(['keys', 'create', '--tenant', 't-online', '--scopes', 'operator'], env);
      expect(online.code).toBe(0);
      // PGlite opens a data directory in one process at a time: the key is made by the server that holds it.
      expect(online.stderr).toContain(`through the server at ${server.url}`);
      expect(offline.stderr).not.toContain('through the server');
      // Asked on another port, nothing answers there, and the directory is open in the server: refused, nothing opened.
      const elsewhere = { ...env, PORT: String(await freePort()) };
      const refused = await runCli(['keys', 'create', '--tenant', 't-x', '--json'], elsewhere);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ error: { type: 'conflict', operator_action: expect.stringContaining('start and stop it once') } });
      const migrating = await runCli(['migrate'], elsewhere);
      expect([migrating.code, migrating.stdout]).toEqual([1, '']);
      expect(migrating.stderr).toContain('is open in another process');
      for (const [out, tenant] of [
        [offline.stdout, 't-offline'],
        [online.stdout, 't-online'],
      ]) {
        const res = await whoami(server.url, out.trim());
        expect([tenant, res.status]).toEqual([tenant, 200]);
        expect(((await res.json()) as Caller).data.tenant_id).toBe(tenant);
        expect((await whoami(server.url, tampered(out.trim()))).status).toBe(401);
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('hecate start', () => {
  it('runs the embedded server on a temporary data directory; SIGTERM stops it with exit 0', async () => {
    const port = await freePort();
    const cli = spawnCli(['start'], { GATEWAY_DATA_DIR: await migratedEmbeddedDataDir(), PORT: String(port) });
    const health = await waitFor(
      async () => {
        if (cli.proc.exitCode !== null) throw new Error(`hecate start exited ${cli.proc.exitCode}:\n${cli.output()}`);
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        return res.ok ? ((await res.json()) as { status: string }) : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 100, what: 'hecate start to answer /healthz' },
    );
    expect(health.status).toBe('ok');
    cli.proc.kill('SIGTERM');
    const { code } = await cli.exited;
    expect(code).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('refuses --role api without scaled mode, saying what to set', async () => {
    const run = await runCli(['start', '--role', 'api']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL and REDIS_URL');
  });
});

describe('npm start', () => {
  // The suite runs after `npm test` built dist/ from this checkout (what a person's second `npm start` finds); npm
  // start always runs dist/, whatever HECATE_DIST says.
  it('on an unchanged checkout only checks the build, then runs the embedded server; SIGTERM to its group stops it', async () => {
    const port = await freePort();
    const env = childEnv({ GATEWAY_DATA_DIR: await migratedEmbeddedDataDir(), PORT: String(port) });
    const proc = spawn('npm', ['start'], { cwd: resolve(__dirname, '../../..'), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((res) => proc.once('close', res));
    try {
      const health = await waitFor(
        async () => {
          if (proc.exitCode !== null) throw new Error(`npm start exited ${proc.exitCode}:\n${out}`);
          const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return res?.ok ? ((await res.json()) as { status: string }) : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 100, what: 'npm start to answer /healthz' },
      );
      expect(health.status).toBe('ok');
      expect(out).toContain('build: dist/ and the SDK types are current');
      expect(out).not.toMatch(/nest build|vite build/);
    } finally {
      process.kill(-proc.pid!, 'SIGTERM');
    }
    await exited;
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
