import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * Rows of an embedded (PGlite) server's database, read the only way PGlite allows — by one process at a time: the
 * server must be stopped first (tests restart it on the same GATEWAY_DATA_DIR afterwards). Scaled tests read
 * Postgres with `sql()` from infra.ts instead.
 */
export async function queryEmbedded<R = Record<string, unknown>>(dataDir: string, text: string, params: unknown[] = []): Promise<R[]> {
  const db = await PGlite.create({ dataDir: join(dataDir, 'pglite') });
  try {
    return (await db.query<R>(text, params)).rows;
  } finally {
    await db.close();
  }
}
