import { DataSource } from 'typeorm';
import type { PlatformConfig } from '@core/config/groups/platform.env';
import { createDataSource } from './data-source.factory';

/** Arbitrary but fixed: the advisory lock that serialises migrate-on-boot across pods. */
export const MIGRATION_LOCK_KEY = 726_354_001;

export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const hasTable = await runner.hasTable(dataSource.options.migrationsTableName ?? 'migrations');
    // TypeORM runs migrations in timestamp order (the digits ending each name), whatever the list order.
    const stamp = (name: string) => Number(/(\d{13})$/.exec(name)?.[1] ?? 0);
    const all = dataSource.migrations.map((m) => m.name ?? m.constructor.name).sort((a, b) => stamp(a) - stamp(b));
    if (!hasTable) return all;
    const rows: { name: string }[] = await runner.query(`SELECT name FROM "${dataSource.options.migrationsTableName ?? 'migrations'}"`);
    const applied = new Set(rows.map((r) => r.name));
    return all.filter((name) => !applied.has(name));
  } finally {
    await runner.release();
  }
}

/**
 * Runs pending migrations while holding a session-level advisory lock, so two processes migrating at
 * once apply each migration exactly once (the second waits, then finds nothing pending).
 */
export async function migrateWithLock(dataSource: DataSource): Promise<string[]> {
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    try {
      await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    } finally {
      await lockRunner.release();
    }
  }
}

/** Embedded mode: one process, one connection — no lock needed (and the lock would self-deadlock). */
export async function migrateEmbedded(dataSource: DataSource): Promise<string[]> {
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}

export interface MigrationReport {
  storage: 'postgres' | 'pglite';
  /** Names of the migrations applied now, in order (empty when the database was up to date). */
  applied: string[];
}

/**
 * Applies pending migrations to the configured database once: Postgres at DATABASE_URL under the advisory lock, or the
 * embedded PGlite database in GATEWAY_DATA_DIR. `npm run migrate` (the Helm hook Job) and `hecate migrate` run this.
 */
export async function migrateConfigured(database: PlatformConfig['database'], applicationName: string): Promise<MigrationReport> {
  const dataSource = await createDataSource({ url: database.url, dataDir: database.dataDir, poolSize: 2, entities: [], applicationName });
  await dataSource.initialize();
  try {
    if (database.url) return { storage: 'postgres', applied: await migrateWithLock(dataSource) };
    return { storage: 'pglite', applied: await migrateEmbedded(dataSource) };
  } finally {
    await dataSource.destroy();
  }
}
