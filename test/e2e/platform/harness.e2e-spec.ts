import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type Stack } from '../../support/harness';
import { sql, withAdmin } from '../../support/infra';
import { embeddedEnv, startServer } from '../../support/server-process';

/**
 * The e2e harness (test/support/harness.ts): a stack's database starts as a copy of the migrated template, the
 * server's own migration step still runs on it and finds nothing to apply; an `empty` data directory is migrated by
 * the server as on a first `npm start`; stopping a stack kills its processes and drops its database.
 */
describe('e2e harness: stacks on migrated templates', () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
  });

  it('embedded: the first start finds the template copy migrated (its migration step applies nothing)', async () => {
    const stack = await startStack({ mode: 'embedded', token: 'harness-e2e-token-0123456789' });
    stacks.push(stack);
    expect(stack.apis).toHaveLength(1);
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    expect(existsSync(join(stack.env.GATEWAY_DATA_DIR, 'pglite'))).toBe(true);
    expect(stack.apis[0].output()).not.toContain('embedded database migrated');
  });

  it('embedded, empty: the server creates and migrates its database itself', async () => {
    const server = await startServer('all', embeddedEnv({ empty: true }));
    try {
      expect(server.output()).toContain('embedded database migrated');
    } finally {
      await server.stop();
    }
  });

  it('scaled: api and worker on a template copy that the migrate step found up to date; stop drops the database', async () => {
    const stack = await startStack({ mode: 'scaled', token: 'harness-e2e-token-0123456789', workers: 1 });
    expect([stack.apis.length, stack.workers.length]).toEqual([1, 1]);
    const [{ n }] = await sql<{ n: number }>(stack.db!.url, 'SELECT count(*)::int AS n FROM schema_migrations');
    expect(n).toBeGreaterThan(0);
    const name = stack.db!.name;
    await stack.stop();
    expect(stack.all.every((p) => p.proc.exitCode !== null || p.proc.signalCode !== null)).toBe(true);
    const left = await withAdmin((admin) => admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
    expect(left.rowCount).toBe(0);
  });
});
