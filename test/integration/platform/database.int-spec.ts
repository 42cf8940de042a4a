import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, QueryFailedError } from 'typeorm';
import { MIGRATIONS } from '@migrations';
import { createDataSource } from '@core/database/data-source.factory';
import { migrateEmbedded, migrateWithLock, pendingMigrations } from '@core/database/migrator';
import { PreparedStatement, queryPrepared } from '@core/database/prepared-statement';
import { execSql, isoText, NOW, setClause } from '@core/database/sql';
import { createScratchDatabase, ScratchDatabase, sql } from '../../support/infra';

// TypeORM applies migrations in timestamp order (the digits ending each name).
const ALL = MIGRATIONS.map((m) => new m().name).sort((a, b) => Number(/\d+$/.exec(a)![0]) - Number(/\d+$/.exec(b)![0]));

async function open(url: string | undefined, dataDir = mkdtempSync(join(tmpdir(), 'hecate-db-'))): Promise<DataSource> {
  const ds = await createDataSource({ url, dataDir, poolSize: 4, entities: [] });
  await ds.initialize();
  return ds;
}

const tablesOf = async (ds: DataSource): Promise<string[]> =>
  ((await ds.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)) as { tablename: string }[]).map((r) => r.tablename);

describe('migrations on Postgres', () => {
  let db: ScratchDatabase;
  beforeEach(async () => (db = await createScratchDatabase()));
  afterEach(() => db.drop());

  it('reports every migration pending on an empty database, applies them, then none are pending', async () => {
    const ds = await open(db.url);
    try {
      expect(await pendingMigrations(ds)).toEqual(ALL);
      expect(await migrateWithLock(ds)).toEqual(ALL);
      expect(await pendingMigrations(ds)).toEqual([]);
      expect(await tablesOf(ds)).toEqual(expect.arrayContaining(['api_keys', 'schema_migrations', 'system_queue_probes']));
    } finally {
      await ds.destroy();
    }
  });

  it('applies each migration exactly once when two processes migrate at the same time (advisory lock)', async () => {
    const [a, b] = await Promise.all([open(db.url), open(db.url)]);
    try {
      const [appliedA, appliedB] = await Promise.all([migrateWithLock(a), migrateWithLock(b)]);
      expect([...appliedA, ...appliedB].sort()).toEqual([...ALL].sort());
      const rows = await sql<{ name: string }>(db.url, 'SELECT name FROM schema_migrations');
      expect(rows.map((r) => r.name).sort()).toEqual([...ALL].sort());
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });

  it('keeps working after Postgres terminates every app connection', async () => {
    const ds = await open(db.url);
    try {
      await migrateWithLock(ds);
      await Promise.all([ds.query('SELECT 1'), ds.query('SELECT 1'), ds.query('SELECT 1')]);
      const killed = await sql<{ n: number }>(
        db.url,
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [db.name],
      );
      expect(killed[0].n).toBeGreaterThan(0);
      // The pool drops dead clients (its error handler logs instead of crashing); the next queries reconnect.
      // One in-flight query may fail with the terminated connection; later ones must succeed.
      let ok = 0;
      for (let i = 0; i < 10 && ok < 3; i++) {
        try {
          await ds.query('SELECT 1');
          ok++;
        } catch {
          // a client that was mid-checkout when killed
        }
      }
      expect(ok).toBe(3);
    } finally {
      await ds.destroy();
    }
  });
});

describe('migrations and transactions on PGlite', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = await open(undefined);
  }, 60_000);
  afterAll(() => ds.destroy());

  it('applies the same migrations as Postgres', async () => {
    expect(await pendingMigrations(ds)).toEqual(ALL);
    expect(await migrateEmbedded(ds)).toEqual(ALL);
    expect(await pendingMigrations(ds)).toEqual([]);
    expect(await tablesOf(ds)).toEqual(expect.arrayContaining(['api_keys', 'schema_migrations', 'system_queue_probes']));
  });

  it('isolates concurrent transactions on its single connection (a rollback never takes another commit with it)', async () => {
    const insert = (m: DataSource['manager'], id: string) =>
      m.query(`INSERT INTO system_queue_probes (id, tenant_id, status) VALUES ($1, 't', 'queued')`, [id]);
    const a = '00000000-0000-4000-8000-00000000000a';
    const b = '00000000-0000-4000-8000-00000000000b';
    const failing = ds.transaction(async (m) => {
      await insert(m, a);
      // Holds A open a moment (a fixed wait on purpose) so B is issued while A is still running.
      await new Promise((r) => setTimeout(r, 20));
      throw new Error('roll back A');
    });
    const committing = ds.transaction(async (m) => insert(m, b));
    // Settle both before asserting, so a failure here can never become an unhandled rejection.
    const [a1, b1] = await Promise.allSettled([failing, committing]);
    expect(a1).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'roll back A' }) });
    expect(b1.status).toBe('fulfilled');
    const rows = (await ds.query(`SELECT id FROM system_queue_probes WHERE id IN ($1, $2)`, [a, b])) as { id: string }[];
    expect(rows.map((r) => r.id)).toEqual([b]);
  });

  it('reports affected rows of UPDATE (compare-and-set relies on it)', async () => {
    const id = '00000000-0000-4000-8000-0000000000cc';
    await ds.query(`INSERT INTO system_queue_probes (id, tenant_id, status) VALUES ($1, 't', 'queued')`, [id]);
    const cas = (from: string) =>
      ds.createQueryBuilder().update('system_queue_probes').set({ status: 'running' }).where('id = :id AND status = :from', { id, from }).execute();
    expect((await cas('queued')).affected).toBe(1);
    expect((await cas('queued')).affected).toBe(0);
  });

  it('parses bigint as a number and jsonb as objects', async () => {
    const [row] = (await ds.query(`SELECT 9007199254740::bigint AS n, '{"a":[1,2]}'::jsonb AS j`)) as { n: unknown; j: unknown }[];
    expect(row).toEqual({ n: 9007199254740, j: { a: [1, 2] } });
  });
});

describe.each(['postgres', 'pglite'] as const)('prepared statements on %s', (backend) => {
  let db: ScratchDatabase | undefined;
  let ds: DataSource;
  const table = `prepared_probe`;
  const insert = new PreparedStatement(`INSERT INTO ${table} (id, n, j, at, note) SELECT $1, $2, $3::jsonb, $4, $5 RETURNING id, n, j, at, note`);
  beforeAll(async () => {
    if (backend === 'postgres') db = await createScratchDatabase();
    ds = await open(db?.url);
    await ds.query(`CREATE TABLE ${table} (id text PRIMARY KEY, n bigint NOT NULL, j jsonb NOT NULL, at timestamptz NOT NULL, note text)`);
  }, 60_000);
  afterAll(async () => {
    await ds.destroy();
    await db?.drop();
  });

  it('binds each call its own values and answers rows parsed like any query (bigint, jsonb, timestamptz, null)', async () => {
    const at = new Date('2026-11-24T10:00:00.123Z');
    for (let i = 0; i < 8; i++) {
      const rows = await queryPrepared(ds, insert, [`p${i}`, 9007199254740 + i, JSON.stringify({ i, s: "it's" }), at, i % 2 ? null : 'x']);
      expect(rows).toEqual([{ id: `p${i}`, n: 9007199254740 + i, j: { i, s: "it's" }, at, note: i % 2 ? null : 'x' }]);
    }
    const stored = (await ds.query(`SELECT count(*)::int AS c FROM ${table} WHERE id LIKE 'p%'`)) as { c: number }[];
    expect(stored[0].c).toBe(8);
  });

  it('fails like a query (QueryFailedError with the database error) and the statement keeps working', async () => {
    const args = (id: string) => [id, 1, '{}', new Date(), null];
    await queryPrepared(ds, insert, args('dup'));
    const err = await queryPrepared(ds, insert, args('dup')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueryFailedError);
    expect((err as QueryFailedError & { code?: string }).driverError).toMatchObject({ code: '23505' });
    expect(await queryPrepared(ds, insert, args('after-dup'))).toHaveLength(1);
  });

  it('answers no rows when nothing matched and interleaves with transactions on the same pool', async () => {
    const update = new PreparedStatement(`UPDATE ${table} SET n = n + 1 WHERE id = $1 RETURNING n`);
    expect(await queryPrepared(ds, update, ['missing'])).toEqual([]);
    await queryPrepared(ds, insert, ['tx', 1, '{}', new Date(), null]);
    // Either order is fine; neither update may be lost or run inside the other's transaction.
    const [, outside] = await Promise.all([
      ds.transaction(async (m) => {
        await m.query(`UPDATE ${table} SET n = n + 10 WHERE id = 'tx'`);
        // Keeps the transaction open a moment (a fixed wait on purpose) so the other update overlaps it.
        await new Promise((r) => setTimeout(r, 20));
      }),
      queryPrepared(ds, update, ['tx']),
    ]);
    expect(outside).toEqual([{ n: expect.any(Number) }]);
    const [final] = (await ds.query(`SELECT n FROM ${table} WHERE id = 'tx'`)) as { n: number }[];
    expect(final.n).toBe(12);
  });
});

describe.each(['postgres', 'pglite'] as const)('the raw-SQL kit on %s', (backend) => {
  let db: ScratchDatabase | undefined;
  let ds: DataSource;
  beforeAll(async () => {
    if (backend === 'postgres') db = await createScratchDatabase();
    ds = await open(db?.url);
    await ds.query(`CREATE TABLE kit_probe (id text PRIMARY KEY, body text NOT NULL, meta jsonb NOT NULL, n int, at timestamptz, touched timestamptz)`);
  }, 60_000);
  afterAll(async () => {
    await ds.destroy();
    await db?.drop();
  });

  it('setClause updates what the map sets and leaves the rest: JSON, NUL as U+FFFD, dates, now()', async () => {
    await ds.query(`INSERT INTO kit_probe (id, body, meta, n) VALUES ('k1', 'old', '{}', 7)`);
    const at = new Date('2026-01-02T03:04:05.678Z');
    const set = setClause({ body: 'a\u0000b', meta: { paths: ['x\u0000'] }, n: undefined, at, touched: NOW }, 2);
    const { affected } = await execSql(ds.manager, `UPDATE kit_probe SET ${set.sql} WHERE id = $1`, ['k1', ...set.params]);
    expect(affected).toBe(1);
    const [row] = (await ds.query(`SELECT body, meta, n, at, touched IS NOT NULL AS touched FROM kit_probe WHERE id = 'k1'`)) as Record<string, unknown>[];
    expect(row).toEqual({ body: 'a\uFFFDb', meta: { paths: ['x\uFFFD'] }, n: 7, at, touched: true });
  });

  it('isoText reads a timestamp back as the ISO text toISOString gives, whatever the session time zone', async () => {
    const at = new Date('2026-03-29T01:30:00.045Z');
    await ds.query(`INSERT INTO kit_probe (id, body, meta, at) VALUES ('k2', '', '{}', $1)`, [at]);
    const [row] = await ds.transaction(async (m) => {
      await m.query(`SET LOCAL TIME ZONE 'Europe/Berlin'`);
      return (await m.query(`SELECT ${isoText('at')} AS at FROM kit_probe WHERE id = 'k2'`)) as { at: string }[];
    });
    expect(row.at).toBe(at.toISOString());
  });
});

describe('PGlite shutdown with statements in flight', () => {
  it('lets statements already waiting for the connection finish before the database closes', async () => {
    const ds = await open(undefined);
    await ds.query(`CREATE TABLE closing_probe (id text PRIMARY KEY)`);
    const insert = new PreparedStatement(`INSERT INTO closing_probe (id) VALUES ($1) RETURNING id`);
    const inFlight = [1, 2, 3].map((i) => queryPrepared(ds, insert, [`c${i}`]));
    const closing = ds.destroy();
    expect(await Promise.all(inFlight)).toEqual([[{ id: 'c1' }], [{ id: 'c2' }], [{ id: 'c3' }]]);
    await closing;
  }, 60_000);
});
