import { EventEmitter } from 'node:events';
import type { PGlite, Results } from '@electric-sql/pglite';

/** Result in node-postgres' shape, which TypeORM's postgres driver reads (`rows`, `rowCount`, `command`). */
interface PgShapedResult {
  rows: unknown[];
  rowCount: number;
  command: string;
  fields: Results['fields'];
}

type Release = (err?: unknown) => void;
type ConnectCallback = (err: Error | null, client: PGliteClient | null, release: Release) => void;
type QueryCallback = (err: Error | null, result: PgShapedResult | null) => void;

/** FIFO mutex: PGlite has one connection, so a checked-out client owns it until released. */
class Mutex {
  private locked = false;
  private readonly waiters: (() => void)[] = [];
  async acquire(): Promise<() => void> {
    if (this.locked) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.locked = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.locked = false;
    };
  }
}

function commandOf(sql: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*)*(\w+)/.exec(sql);
  return match ? match[1].toUpperCase() : '';
}

function toPgShape(sql: string, result: Results): PgShapedResult {
  const command = commandOf(sql);
  const rowCount = result.affectedRows ?? result.rows.length;
  return { rows: result.rows, rowCount, command, fields: result.fields };
}

async function runQuery(db: PGlite, sql: string, params?: unknown[]): Promise<PgShapedResult> {
  if (params && params.length > 0) return toPgShape(sql, await db.query(sql, params));
  const results = await db.exec(sql);
  const last = results[results.length - 1] ?? { rows: [], fields: [], affectedRows: 0 };
  return toPgShape(sql, last);
}

class PGliteClient extends EventEmitter {
  constructor(private readonly db: PGlite) {
    super();
  }
  query(sql: string, paramsOrCb?: unknown[] | QueryCallback, cb?: QueryCallback): Promise<PgShapedResult> {
    const params = Array.isArray(paramsOrCb) ? paramsOrCb : undefined;
    const callback = typeof paramsOrCb === 'function' ? paramsOrCb : cb;
    const promise = runQuery(this.db, sql, params);
    if (callback) promise.then((r) => callback(null, r), (e: Error) => callback(e, null));
    return promise;
  }
}

/**
 * A TypeORM `driver` for PGlite (used with `type: 'postgres'`). Unlike a shared global instance, each
 * pool owns its PGlite, and connection checkout is serialised so two transactions never interleave
 * statements on PGlite's single connection.
 */
export function pgliteTypeormDriver(db: PGlite): { Pool: new () => EventEmitter } {
  const mutex = new Mutex();
  class Pool extends EventEmitter {
    connect(callback: ConnectCallback): void {
      mutex.acquire().then(
        (unlock) => {
          const client = new PGliteClient(db);
          callback(null, client, () => unlock());
        },
        (err: Error) => callback(err, null, () => undefined),
      );
    }
    query(sql: string, paramsOrCb?: unknown[] | QueryCallback, cb?: QueryCallback): Promise<PgShapedResult> {
      const run = async () => {
        const unlock = await mutex.acquire();
        try {
          return await new PGliteClient(db).query(sql, Array.isArray(paramsOrCb) ? paramsOrCb : undefined);
        } finally {
          unlock();
        }
      };
      const callback = typeof paramsOrCb === 'function' ? paramsOrCb : cb;
      const promise = run();
      if (callback) promise.then((r) => callback(null, r), (e: Error) => callback(e, null));
      return promise;
    }
    end(callback?: (err: Error | null) => void): Promise<void> {
      const done = db.close();
      if (callback) done.then(() => callback(null), (e: Error) => callback(e));
      return done;
    }
  }
  return { Pool };
}
