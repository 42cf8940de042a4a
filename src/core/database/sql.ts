import type { EntityManager } from 'typeorm';
import { storableJson, storableText } from './storable';

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

/** `now()` of the database as a value in a SetMap. */
export const NOW = Symbol('now');

/** Assignments of an UPDATE, column → value; columns come from code constants, never from input. */
export type SetMap = Record<string, unknown>;

const COLUMN = /^[a-z_]+$/;

/**
 * The `SET` list of an UPDATE for `set`, its parameters numbered from `$first`: `NOW` is the database's `now()`, an
 * `undefined` value leaves its column alone (a patch's absent field), an object or array goes as JSON text. NUL (a
 * model's or an adapter's output) is stored as U+FFFD: text and jsonb cannot hold it (./storable.ts).
 */
export function setClause(set: SetMap, first: number): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of Object.entries(set)) {
    if (!COLUMN.test(column)) throw new Error(`setClause: bad column ${column}`);
    if (value === undefined) continue;
    if (value === NOW) {
      parts.push(`${column} = now()`);
      continue;
    }
    params.push(
      value !== null && typeof value === 'object' && !(value instanceof Date) ? storableJson(value) : typeof value === 'string' ? storableText(value) : value,
    );
    parts.push(`${column} = $${first + params.length - 1}`);
  }
  if (parts.length === 0) throw new Error('setClause: nothing to set');
  return { sql: parts.join(', '), params };
}

/**
 * A timestamp column as ISO-8601 text in UTC with milliseconds (`2026-01-02T03:04:05.678Z`, what `toISOString()`
 * gives): node-postgres' own timestamp parsing costs more than the query on large reads, `new Date(iso)` is cheap.
 */
export const isoText = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Retention of one table (the pruners' one shape): rows matching `keep` never go; of the rest, those created before
 * `olderThan`, then all but the newest `keepNewest`. `table` and `keep` come from code constants, never from input.
 * Returns the rows deleted.
 */
export async function pruneByAgeAndCount(
  manager: EntityManager,
  prune: { table: string; keep?: string },
  olderThan: Date,
  keepNewest: number,
): Promise<number> {
  const prunable = prune.keep ? `NOT (${prune.keep})` : 'true';
  const byAge = await execSql(manager, `DELETE FROM ${prune.table} WHERE ${prunable} AND created_at < $1`, [olderThan]);
  const byCount = await execSql(
    manager,
    `DELETE FROM ${prune.table} WHERE id IN (SELECT id FROM ${prune.table} WHERE ${prunable} ORDER BY created_at DESC, id DESC OFFSET $1)`,
    [keepNewest],
  );
  return byAge.affected + byCount.affected;
}
