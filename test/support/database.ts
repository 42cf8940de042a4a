import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { createDataSource } from '@core/database/data-source.factory';
import { migrateEmbedded, migrateWithLock } from '@core/database/migrator';
import { createScratchDatabase, ScratchDatabase } from './infra';

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

/**
 * The one database setup of integration tests: a scratch Postgres database (through TEST_DATABASE_URL) or a fresh
 * PGlite directory, opened through the server's own DataSource factory and, unless `migrate: false`, migrated the
 * way each mode migrates (advisory lock on Postgres). `close()` destroys the DataSource and drops the scratch database.
 */
export async function openTestDatabase(
  backend: Backend,
  opts: { poolSize?: number; entities?: Function[]; migrate?: boolean; prefix?: string } = {}, // eslint-disable-line @typescript-eslint/no-unsafe-function-type
): Promise<TestDatabase> {
  let db: ScratchDatabase | undefined;
  if (backend === 'postgres') db = await createScratchDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), opts.prefix ?? 'hecate-db-'));
  const dataSource = await createDataSource({ url: db?.url, dataDir, poolSize: opts.poolSize ?? 10, entities: opts.entities ?? [] });
  await dataSource.initialize();
  if (opts.migrate !== false) {
    if (backend === 'postgres') await migrateWithLock(dataSource);
    else await migrateEmbedded(dataSource);
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
