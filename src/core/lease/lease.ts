import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import { rootLogger } from '@core/logging/logger';

/**
 * Where a kind of leased work keeps its lease: the owner table and its columns. Names are constants of the owning
 * module (never input); `heldWhere` is the extra condition under which a lease counts as held at all (task runs:
 * `status = 'running'`).
 */
export interface LeaseTable {
  table: string;
  id: string;
  owner: string;
  token: string;
  expiresAt: string;
  heldWhere?: string;
}

/** This process's identity as a lease owner (host:pid:random), shared by every kind of leased work. */
export const LEASE_OWNER = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

export const newLeaseToken = (): string => randomUUID();

/** Table and column names are spliced into SQL: only plain lower-case identifiers (constants of code) are accepted. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * The one lease primitive (docs/design.md §4.4, §11.3): owner, token, expiry in Postgres time, compare-and-set claim,
 * heartbeat, token-checked writes, release and reclaim of expired leases — for task runs and chat generations today,
 * agent-chat turns and adapter sessions next. Every statement compares against `now()` of the database, never a
 * process clock, so leases are fair between hosts whose clocks drift.
 */
export class Lease {
  private readonly held: string;
  /** Rows that hold a lease at all (live or expired): `heldWhere`, else any row with a token. */
  private readonly holding: string;

  constructor(readonly t: LeaseTable) {
    for (const name of [t.table, t.id, t.owner, t.token, t.expiresAt]) {
      if (!IDENTIFIER.test(name)) throw new Error(`lease table: ${JSON.stringify(name)} is not a plain SQL identifier`);
    }
    this.held = t.heldWhere ? ` AND (${t.heldWhere})` : '';
    this.holding = t.heldWhere ? `(${t.heldWhere})` : `${t.token} IS NOT NULL`;
  }

  /** SQL expression: the expiry of a lease taken or extended now for the milliseconds in parameter `$n`. */
  private until(msParam: number): string {
    return `now() + ($${msParam} * interval '1 millisecond')`;
  }

  /** SQL `SET` fragment that takes the lease for (owner $o, token $k) for $ms milliseconds; `$n` are the parameter numbers. */
  claimSet(ownerParam: number, tokenParam: number, msParam: number): string {
    return `${this.t.owner} = $${ownerParam}, ${this.t.token} = $${tokenParam}, ${this.t.expiresAt} = ${this.until(msParam)}`;
  }

  /** Columns and `VALUES` expressions of an INSERT that creates a row already held (the row is the lock, e.g. chat generations). */
  grantValues(ownerParam: number, tokenParam: number, msParam: number): { columns: string; values: string } {
    return {
      columns: `${this.t.owner}, ${this.t.token}, ${this.t.expiresAt}`,
      values: `$${ownerParam}, $${tokenParam}, ${this.until(msParam)}`,
    };
  }

  /** SQL predicate: the row is held by the token in parameter `$n` (for writes the caller composes itself). */
  heldBy(tokenParam: number): string {
    return `(${this.t.token} = $${tokenParam}${this.held})`;
  }

  /** SQL predicate: a held lease that has not expired (counting live holders). */
  get liveSql(): string {
    return `(${this.t.expiresAt} > now()${this.held})`;
  }

  /** SQL `SET` fragment that clears the lease. */
  get clearSet(): string {
    return `${this.t.owner} = NULL, ${this.t.token} = NULL, ${this.t.expiresAt} = NULL`;
  }

  /** SQL expression: milliseconds left on the lease (negative when expired, NULL when none). */
  get remainingMsSql(): string {
    return `(EXTRACT(EPOCH FROM (${this.t.expiresAt} - now())) * 1000)::bigint`;
  }

  /** SQL predicate: the lease is gone or expired (the row may be taken over). */
  get expiredSql(): string {
    return `(${this.t.expiresAt} IS NULL OR ${this.t.expiresAt} < now())`;
  }

  /**
   * Compare-and-set claim of a row that is free (no token) or expired, in one statement: true when this owner
   * now holds it. `extraWhere` narrows which rows may be claimed (e.g. a status); `extraSet` are assignments made by
   * the same statement (e.g. `status = 'running', attempts = attempts + 1`). Both are SQL constants of the caller.
   */
  async claim(manager: EntityManager, id: string, owner: string, token: string, leaseMs: number, extraWhere = 'TRUE', extraSet = ''): Promise<boolean> {
    const { affected } = await execSql(
      manager,
      `UPDATE ${this.t.table} SET ${this.claimSet(2, 3, 4)}${extraSet ? `, ${extraSet}` : ''}
        WHERE ${this.t.id} = $1 AND (${this.t.token} IS NULL OR ${this.expiredSql}) AND (${extraWhere})`,
      [id, owner, token, leaseMs],
    );
    return affected > 0;
  }

  /** Extends the lease if `token` still holds it; false means it was taken over, released or the work ended. */
  async heartbeat(manager: EntityManager, id: string, token: string, leaseMs: number): Promise<boolean> {
    const { affected } = await execSql(
      manager,
      `UPDATE ${this.t.table} SET ${this.t.expiresAt} = ${this.until(3)}
        WHERE ${this.t.id} = $1 AND ${this.t.token} = $2${this.held}`,
      [id, token, leaseMs],
    );
    return affected > 0;
  }

  /**
   * The guard at the start of every write by the holder, inside the caller's transaction: locks the row and proves
   * `token` still holds the lease. `touch` is an extra assignment made on the way (e.g. `updated_at = now()`).
   */
  async guard(manager: EntityManager, id: string, token: string, touch = `${this.t.token} = ${this.t.token}`): Promise<boolean> {
    const { affected } = await execSql(manager, this.guardSql(touch), [id, token]);
    return affected > 0;
  }

  /**
   * The guard as SQL ($1 id, $2 token; `touch` may use later parameters), returning one row when `token` holds the
   * lease: a statement of its own, or the first CTE of a single-statement write that makes every other part depend on it.
   */
  guardSql(touch = `${this.t.token} = ${this.t.token}`): string {
    return `UPDATE ${this.t.table} SET ${touch} WHERE ${this.t.id} = $1 AND ${this.t.token} = $2${this.held} RETURNING 1 AS held`;
  }

  /** Gives the lease up (the work is done or handed back); false when `token` no longer held it. */
  async release(manager: EntityManager, id: string, token: string): Promise<boolean> {
    const { affected } = await execSql(manager, `UPDATE ${this.t.table} SET ${this.clearSet} WHERE ${this.t.id} = $1 AND ${this.t.token} = $2`, [id, token]);
    return affected > 0;
  }

  /** Ids of held rows whose lease expired, row-locked (SKIP LOCKED) in the caller's transaction, oldest first: to reclaim. */
  async lockExpired(manager: EntityManager, limit: number): Promise<string[]> {
    const { rows } = await execSql<{ id: string }>(
      manager,
      `SELECT ${this.t.id} AS id FROM ${this.t.table}
        WHERE ${this.expiredSql} AND ${this.holding}
        ORDER BY ${this.t.expiresAt} ASC NULLS FIRST LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Ids of held rows owned by anyone but `owner`, row-locked (SKIP LOCKED): a single-process deployment reclaims them
   * at boot, since they belonged to an earlier life of the process.
   */
  async lockHeldByOthers(manager: EntityManager, owner: string, limit: number): Promise<string[]> {
    const { rows } = await execSql<{ id: string }>(
      manager,
      `SELECT ${this.t.id} AS id FROM ${this.t.table}
        WHERE ${this.t.owner} IS DISTINCT FROM $1 AND ${this.holding}
        LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [owner, limit],
    );
    return rows.map((r) => r.id);
  }
}

/**
 * Keeps a held lease alive: beats every `intervalMs` (default: a third of the lease) and calls `onLost` once when a
 * beat finds the lease gone. A failed beat (database unreachable) is logged and retried at the next tick: the
 * lease itself decides, by expiring, whether the work is taken over. Returns the function that stops beating.
 */
export function keepLease(
  beat: () => Promise<boolean>,
  opts: { leaseMs: number; intervalMs?: number; onLost: () => void; what: Record<string, unknown> },
): () => void {
  let stopped = false;
  let beating = false;
  const timer = setInterval(
    () => {
      // A beat still waiting on the database (slow or unreachable) is not stacked with another one.
      if (beating) return;
      beating = true;
      beat().then(
        (held) => {
          beating = false;
          if (!held && !stopped) {
            stopped = true;
            clearInterval(timer);
            opts.onLost();
          }
        },
        (err: unknown) => {
          beating = false;
          rootLogger().warn({ ...opts.what, err: String(err) }, 'lease heartbeat failed; retrying');
        },
      );
    },
    Math.max(100, opts.intervalMs ?? Math.floor(opts.leaseMs / 3)),
  );
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
