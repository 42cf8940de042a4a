import { EventEmitter } from 'node:events';
import { parse, protocol } from '@electric-sql/pglite';
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
/** node-postgres' query config; `name` makes it a named prepared statement. */
interface QueryConfig {
  text: string;
  values?: unknown[];
  name?: string;
}

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

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
};

/**
 * Named prepared statements on PGlite's one connection (node-postgres' `{ name, text, values }` query). PGlite's
 * own `query` parses and plans every call, in six protocol exchanges with the WASM backend; a prepared statement
 * is parsed once, then each call is one exchange: bind, describe, execute, sync. Parameters are serialised as
 * PGlite's `query` does (by the types the backend inferred at parse time) and rows parsed by its parsers.
 */
class PreparedStatements {
  private readonly known = new Map<string, { text: string; paramTypes: number[] }>();

  constructor(private readonly db: PGlite) {}

  run(name: string, text: string, values: unknown[]): Promise<Results> {
    return this.db.runExclusive(async () => {
      // execProtocol skips PGlite's own closed check: fail like its query() does, not with a TypeError.
      if (this.db.closed) throw new Error('PGlite is closed');
      let statement = this.known.get(name);
      if (statement && statement.text !== text) throw new Error(`prepared statement ${name} was used for a different statement`);
      if (!statement) {
        const { serialize } = protocol;
        const described = await this.db.execProtocol(concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]));
        statement = { text, paramTypes: parse.parseDescribeStatementResults(described.messages) };
        this.known.set(name, statement);
      }
      const types = statement.paramTypes;
      const serialized = values.map((v, i) => {
        if (v === null || v === undefined) return null;
        const serializer = this.db.serializers[types[i]];
        return serializer ? serializer(v) : String(v);
      });
      const { serialize } = protocol;
      const result = await this.db.execProtocol(
        concat([serialize.bind({ statement: name, values: serialized }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]),
      );
      return parse.parseResults(result.messages, this.db.parsers)[0] ?? { rows: [], fields: [], affectedRows: 0 };
    });
  }
}

class PGliteClient extends EventEmitter {
  constructor(
    private readonly db: PGlite,
    private readonly prepared: PreparedStatements,
  ) {
    super();
  }
  query(sqlOrConfig: string | QueryConfig, paramsOrCb?: unknown[] | QueryCallback, cb?: QueryCallback): Promise<PgShapedResult> {
    const callback = typeof paramsOrCb === 'function' ? paramsOrCb : cb;
    let promise: Promise<PgShapedResult>;
    if (typeof sqlOrConfig === 'string') {
      promise = runQuery(this.db, sqlOrConfig, Array.isArray(paramsOrCb) ? paramsOrCb : undefined);
    } else {
      const { name, text, values = [] } = sqlOrConfig;
      promise = name ? this.prepared.run(name, text, values).then((r) => toPgShape(text, r)) : runQuery(this.db, text, values);
    }
    if (callback)
      promise.then(
        (r) => callback(null, r),
        (e: Error) => callback(e, null),
      );
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
  const prepared = new PreparedStatements(db);
  class Pool extends EventEmitter {
    connect(callback: ConnectCallback): void {
      mutex.acquire().then(
        (unlock) => {
          const client = new PGliteClient(db, prepared);
          callback(null, client, () => unlock());
        },
        (err: Error) => callback(err, null, () => undefined),
      );
    }
    query(sql: string, paramsOrCb?: unknown[] | QueryCallback, cb?: QueryCallback): Promise<PgShapedResult> {
      const run = async () => {
        const unlock = await mutex.acquire();
        try {
          return await new PGliteClient(db, prepared).query(sql, Array.isArray(paramsOrCb) ? paramsOrCb : undefined);
        } finally {
          unlock();
        }
      };
      const callback = typeof paramsOrCb === 'function' ? paramsOrCb : cb;
      const promise = run();
      if (callback)
        promise.then(
          (r) => callback(null, r),
          (e: Error) => callback(e, null),
        );
      return promise;
    }
    end(callback?: (err: Error | null) => void): Promise<void> {
      // Close after the statement that holds the connection (if any); later ones then see a closed database.
      const done = mutex.acquire().then(async (unlock) => {
        try {
          if (!db.closed) await db.close();
        } finally {
          unlock();
        }
      });
      if (callback)
        done.then(
          () => callback(null),
          (e: Error) => callback(e),
        );
      return done;
    }
  }
  return { Pool };
}
