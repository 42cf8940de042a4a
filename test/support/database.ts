import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { createDataSource } from '@core/database/data-source.factory';
import { migrateEmbedded, migrateWithLock } from '@core/database/migrator';
import { createScratchDatabase, databaseUrl, ScratchDatabase, uniqueId, withAdmin } from './infra';

export type Backend = 'postgres' | 'pglite';

export interface TestDatabase {
  backend: Backend;
  dataSource: DataSource;
  /** The scratch Postgres database's URL (undefined for PGlite). */
  url: string | undefined;
  /** The PGlite data directory (also set, unused, for Postgres). */
  dataDir: string;
  close(): Promise<void>;
}

const ROOT = join(__dirname, '..', '..');

/**
 * What a migrated template is built from: every file of migrations/ (index.ts lists them) and, for PGlite, the
 * release whose data directory format it is. A changed migration names a new template, so no run reuses a stale one.
 */
function templateHash(extra = ''): string {
  const hash = createHash('sha256').update(extra);
  const dir = join(ROOT, 'migrations');
  for (const file of readdirSync(dir).sort()) hash.update(`\0${file}\0`).update(readFileSync(join(dir, file)));
  return hash.digest('hex').slice(0, 12);
}

/** Arbitrary but fixed (next to the server's MIGRATION_LOCK_KEY): parallel Jest workers build the template once. */
const TEMPLATE_LOCK_KEY = 726_354_002;
let postgresTemplate: Promise<string> | undefined;

/**
 * The migrated Postgres template database of this run, `hecate_tpl_<hash of migrations>`, built once: under an
 * advisory lock, into a scratch name renamed when complete, so a process that finds the name finds it migrated (a
 * second server-wide builder that loses the rename race drops its copy). Names match `.ci/run`'s `hecate_t_%` cleanup.
 */
export function migratedPostgresTemplate(): Promise<string> {
  postgresTemplate ??= withAdmin(async (admin) => {
    const name = `hecate_tpl_${templateHash()}`;
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return name;
      const building = `${name}_${uniqueId('w')}`;
      await admin.query(`CREATE DATABASE ${building}`);
      try {
        // Two connections: migrateWithLock holds one for its lock while the migrations run on another.
        const ds = await createDataSource({ url: databaseUrl(building), dataDir: tmpdir(), poolSize: 2, entities: [] });
        await ds.initialize();
        try {
          await migrateWithLock(ds);
        } finally {
          await ds.destroy();
        }
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        if ((err as { code?: string }).code !== '42P04') throw err; // duplicate_database: another builder won
      }
      return name;
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  }).catch((err: unknown) => {
    postgresTemplate = undefined;
    throw err;
  });
  return postgresTemplate;
}

let pgliteTemplate: Promise<string> | undefined;

/**
 * A migrated PGlite data directory, built once per PGlite release and migrations (in node_modules/.cache, which a
 * fresh install starts without): built in a scratch directory and renamed when complete, like the Postgres template.
 */
function migratedPgliteTemplate(): Promise<string> {
  pgliteTemplate ??= (async () => {
    const pglite = JSON.parse(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string };
    const cache = join(ROOT, 'node_modules', '.cache', 'hecate-test');
    const dir = join(cache, `pglite-${templateHash(pglite.version)}`);
    if (existsSync(dir)) return dir;
    mkdirSync(cache, { recursive: true });
    const building = mkdtempSync(`${dir}-building-`);
    try {
      const ds = await createDataSource({ url: undefined, dataDir: building, poolSize: 1, entities: [] });
      await ds.initialize();
      try {
        await migrateEmbedded(ds);
      } finally {
        await ds.destroy();
      }
      renameSync(building, dir);
      // Templates of earlier migrations are never used again (40 MB each).
      for (const old of readdirSync(cache))
        if (/^pglite-[0-9a-f]{12}$/.test(old) && join(cache, old) !== dir) rmSync(join(cache, old), { recursive: true, force: true });
    } catch (err) {
      rmSync(building, { recursive: true, force: true });
      // Another process completed the same template first (rename onto a non-empty directory).
      if (!existsSync(dir)) throw err;
    }
    return dir;
  })().catch((err: unknown) => {
    pgliteTemplate = undefined;
    throw err;
  });
  return pgliteTemplate;
}

/**
 * A fresh temporary GATEWAY_DATA_DIR whose PGlite database is already migrated: a copy of the run's template
 * directory (initialising and migrating PGlite takes seconds; a copy a fraction of that).
 */
export async function migratedEmbeddedDataDir(prefix = 'hecate-db-'): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  await copyMigratedEmbedded(dataDir);
  return dataDir;
}

/** Fills an existing, empty GATEWAY_DATA_DIR with a copy of the run's migrated PGlite template. */
export async function copyMigratedEmbedded(dataDir: string): Promise<void> {
  cpSync(await migratedPgliteTemplate(), dataDir, { recursive: true });
}

/**
 * The one database setup of integration tests: a scratch Postgres database (through TEST_DATABASE_URL) or a fresh
 * PGlite directory, opened through the server's own DataSource factory. Unless `migrate: false` it starts as a copy
 * of the run's migrated template (above) and is then migrated the way each mode migrates (advisory lock on Postgres),
 * which must find nothing pending. `close()` destroys the DataSource and drops the scratch database.
 */
export async function openTestDatabase(
  backend: Backend,
  opts: { poolSize?: number; entities?: Function[]; migrate?: boolean; prefix?: string } = {}, // eslint-disable-line @typescript-eslint/no-unsafe-function-type
): Promise<TestDatabase> {
  const migrate = opts.migrate !== false;
  const prefix = opts.prefix ?? 'hecate-db-';
  let db: ScratchDatabase | undefined;
  if (backend === 'postgres') db = await createScratchDatabase(migrate ? { template: await migratedPostgresTemplate() } : {});
  const dataDir = backend === 'pglite' && migrate ? await migratedEmbeddedDataDir(prefix) : mkdtempSync(join(tmpdir(), prefix));
  const dataSource = await createDataSource({ url: db?.url, dataDir, poolSize: opts.poolSize ?? 10, entities: opts.entities ?? [] });
  try {
    await dataSource.initialize();
    if (migrate) {
      const applied = backend === 'postgres' ? await migrateWithLock(dataSource) : await migrateEmbedded(dataSource);
      // A copy of a complete template has nothing pending; anything applied here means the template was not complete.
      if (applied.length > 0) throw new Error(`the migrated ${backend} template lacked ${applied.join(', ')}`);
    }
  } catch (err) {
    // The test never gets a handle to close: drop what was made for it here.
    if (dataSource.isInitialized) await dataSource.destroy();
    await db?.drop();
    throw err;
  }
  return {
    backend,
    dataSource,
    url: db?.url,
    dataDir,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await db?.drop();
    },
  };
}
