import type { EntityManager } from 'typeorm';

export interface SqlResult<R> {
  rows: R[];
  /** Rows inserted, updated or deleted (both backends report it). */
  affected: number;
}

/**
 * Runs one statement and returns its rows and affected-row count in one shape on Postgres and PGlite
 * (TypeORM's plain `query()` returns `[rows, count]` for UPDATE/DELETE but `rows` for everything else).
 * Uses the manager's transaction when it has one.
 */
export async function execSql<R = Record<string, unknown>>(manager: EntityManager, sql: string, params: unknown[] = []): Promise<SqlResult<R>> {
  const own = manager.queryRunner ? undefined : manager.connection.createQueryRunner();
  const runner = manager.queryRunner ?? own!;
  try {
    const result = await runner.query(sql, params, true);
    const rows = (result.records ?? []) as R[];
    return { rows, affected: result.affected ?? rows.length };
  } finally {
    if (own) await own.release();
  }
}

/** The embedded backend: PGlite, one connection behind the custom driver `createDataSource` gives it (Postgres has none). */
export function isPglite(dataSource: { options: object }): boolean {
  return Boolean((dataSource.options as { driver?: unknown }).driver);
}
