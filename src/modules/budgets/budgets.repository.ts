import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import type { BudgetPeriod } from './budget-periods';

export const BUDGET_SCOPES = ['tenant', 'api_key', 'agent'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

export interface BudgetRow {
  id: string;
  tenant_id: string;
  name: string;
  scope: BudgetScope;
  /** The API key's or saved agent's id; '' for a tenant budget. */
  subject_id: string;
  period: BudgetPeriod;
  limit_micros_usd: string;
  /** Percentages of the limit that emit `budget.threshold_reached` once per window. */
  thresholds: number[];
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** One window's counters. */
export interface WindowRow {
  id: string;
  spent_micros_usd: string;
  reserved_micros_usd: string;
  calls: string;
  thresholds_reached: number[];
}

/** One budget window a call reserved in (what the settlement and the refusal need). */
export interface WindowKey {
  budgetId: string;
  windowStart: Date;
}

export interface SettledWindow {
  budget_id: string;
  window_start: Date;
  spent_micros_usd: string;
  limit_micros_usd: string;
  thresholds_reached: number[];
}

/**
 * Budgets and their windows. Admission is one conditional upsert of the windows' `reserved` counters (row locks make it
 * exact across processes); settlement moves a call's reservation into `spent` in one statement; a worker's sweep gives
 * back reservations whose process never settled them.
 */
@Injectable()
export class BudgetsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    row: Pick<BudgetRow, 'id' | 'tenant_id' | 'name' | 'scope' | 'subject_id' | 'period' | 'thresholds' | 'created_by'> & { limit: number },
  ): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `INSERT INTO budgets (id, tenant_id, name, scope, subject_id, period, limit_micros_usd, thresholds, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (tenant_id, scope, subject_id, period) DO NOTHING`,
      [row.id, row.tenant_id, row.name, row.scope, row.subject_id, row.period, row.limit, row.thresholds, row.created_by],
    );
    return affected > 0;
  }

  async count(tenantId: string): Promise<number> {
    const { rows } = await execSql<{ n: string }>(this.dataSource.manager, `SELECT count(*) AS n FROM budgets WHERE tenant_id = $1`, [tenantId]);
    return Number(rows[0]?.n ?? 0);
  }

  async update(tenantId: string, id: string, set: { name?: string; limit?: number; thresholds?: number[] }): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `UPDATE budgets SET name = COALESCE($3, name), limit_micros_usd = COALESCE($4, limit_micros_usd), thresholds = COALESCE($5, thresholds),
         updated_at = now() WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id, set.name ?? null, set.limit ?? null, set.thresholds ?? null],
    );
    return affected > 0;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const { affected } = await execSql(this.dataSource.manager, `DELETE FROM budgets WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return affected > 0;
  }

  /** A page of the tenant's budgets, newest first. */
  async list(
    tenantId: string,
    filter: { id?: string; scope?: string; subjectId?: string },
    limit: number,
    after?: { at: Date; id: string },
  ): Promise<BudgetRow[]> {
    const { rows } = await execSql<BudgetRow>(
      this.dataSource.manager,
      `SELECT * FROM budgets WHERE tenant_id = $1
         AND ($2::text IS NULL OR id = $2) AND ($3::text IS NULL OR scope = $3) AND ($4::text IS NULL OR subject_id = $4)
         AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6))
       ORDER BY created_at DESC, id DESC LIMIT $7`,
      [tenantId, filter.id ?? null, filter.scope ?? null, filter.subjectId ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  /** The counters of each budget's window (absent: untouched). */
  async windows(keys: WindowKey[]): Promise<Map<string, WindowRow>> {
    if (keys.length === 0) return new Map();
    const { rows } = await execSql<WindowRow>(
      this.dataSource.manager,
      `SELECT w.budget_id AS id, w.spent_micros_usd, w.reserved_micros_usd, w.calls, w.thresholds_reached
         FROM budget_windows w JOIN unnest($1::text[], $2::timestamptz[]) AS k(id, ws) ON w.budget_id = k.id AND w.window_start = k.ws`,
      [keys.map((k) => k.budgetId), keys.map((k) => k.windowStart.toISOString())],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Every budget (each process keeps them in memory: BudgetBook), in id order. */
  async all(): Promise<BudgetRow[]> {
    const { rows } = await execSql<BudgetRow>(this.dataSource.manager, `SELECT * FROM budgets ORDER BY id`);
    return rows;
  }

  /**
   * Reserves `micros` in every window, or in none: a window takes it only while its spent + reserved is below its limit
   * (so the last call let in may end at most its own cost over). Returns the windows that refused (empty: reserved,
   * with one reservation row per window that expires after `ttlSeconds`).
   */
  async reserve(reservationId: string, windows: Array<WindowKey & { limit: number }>, micros: number, ttlSeconds: number): Promise<string[]> {
    const params = [
      windows.map((w) => w.budgetId),
      windows.map((w) => w.windowStart.toISOString()),
      windows.map((w) => w.limit),
      micros,
      reservationId,
      ttlSeconds,
    ];
    const refusedOf = (rows: Array<{ budget_id: string }>) => {
      const admitted = new Set(rows.map((r) => r.budget_id));
      return windows.filter((w) => !admitted.has(w.budgetId)).map((w) => w.budgetId);
    };
    // One budget (the usual case): the statement alone is all or nothing, no transaction's round trips.
    if (windows.length === 1) return refusedOf((await execSql<{ budget_id: string }>(this.dataSource.manager, RESERVE, params)).rows);
    const refused: string[] = [];
    await this.dataSource
      .transaction(async (m) => {
        refused.push(...refusedOf((await execSql<{ budget_id: string }>(m, RESERVE, params)).rows));
        // Some window refused: the others' reservations are rolled back with the transaction.
        if (refused.length > 0) throw ROLLBACK;
      })
      .catch((err: unknown) => {
        if (err !== ROLLBACK) throw err;
      });
    return refused;
  }

  /**
   * A call's end: its cost is added to each window's spent and its reservation (unless a sweep gave it back already)
   * leaves `reserved`. Returns the windows as they now stand.
   */
  async settle(reservationId: string, windows: WindowKey[], micros: number): Promise<SettledWindow[]> {
    const { rows } = await execSql<SettledWindow>(
      this.dataSource.manager,
      `WITH held AS (DELETE FROM budget_reservations WHERE id = $1 RETURNING budget_id, micros_usd)
       UPDATE budget_windows w
          SET spent_micros_usd = w.spent_micros_usd + $4,
              reserved_micros_usd = w.reserved_micros_usd - COALESCE((SELECT h.micros_usd FROM held h WHERE h.budget_id = w.budget_id), 0),
              updated_at = now()
         FROM unnest($2::text[], $3::timestamptz[]) AS k(id, ws)
        WHERE w.budget_id = k.id AND w.window_start = k.ws
       RETURNING w.budget_id, w.window_start, w.spent_micros_usd, w.limit_micros_usd, w.thresholds_reached`,
      [reservationId, windows.map((w) => w.budgetId), windows.map((w) => w.windowStart.toISOString()), micros],
    );
    return rows;
  }

  /** Gives back up to `limit` reservations that expired unsettled (their process died); returns how many. */
  async sweep(limit: number): Promise<number> {
    const { rows } = await execSql<{ n: string }>(
      this.dataSource.manager,
      `WITH gone AS (
         DELETE FROM budget_reservations r USING (
           SELECT id, budget_id FROM budget_reservations WHERE expires_at < now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
         ) old WHERE r.id = old.id AND r.budget_id = old.budget_id
         RETURNING r.budget_id, r.window_start, r.micros_usd
       ),
       per AS (SELECT budget_id, window_start, sum(micros_usd) AS micros, count(*) AS n FROM gone GROUP BY budget_id, window_start),
       fixed AS (
         UPDATE budget_windows w SET reserved_micros_usd = GREATEST(0, w.reserved_micros_usd - per.micros), updated_at = now()
           FROM per WHERE w.budget_id = per.budget_id AND w.window_start = per.window_start
       )
       SELECT COALESCE(sum(n), 0) AS n FROM per`,
      [limit],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Marks threshold `percent` reached in the window; false when it was already (its event went out once). */
  async markReached(m: EntityManager, key: WindowKey, percent: number): Promise<boolean> {
    const { affected } = await execSql(
      m,
      `UPDATE budget_windows SET thresholds_reached = array_append(thresholds_reached, $3)
        WHERE budget_id = $1 AND window_start = $2 AND NOT ($3 = ANY (thresholds_reached))`,
      [key.budgetId, key.windowStart.toISOString(), percent],
    );
    return affected > 0;
  }

  /** For the metrics: budgets per scope, how many have spent their limit in their current window, and the highest use (spent / limit). */
  async utilization(): Promise<Array<{ scope: BudgetScope; budgets: string; exhausted: string; max_ratio: number | null }>> {
    const { rows } = await execSql<{ scope: BudgetScope; budgets: string; exhausted: string; max_ratio: number | null }>(
      this.dataSource.manager,
      `SELECT b.scope, count(*) AS budgets,
              count(*) FILTER (WHERE w.spent_micros_usd >= b.limit_micros_usd) AS exhausted,
              max(w.spent_micros_usd::float8 / b.limit_micros_usd) AS max_ratio
         FROM budgets b
         LEFT JOIN budget_windows w ON w.budget_id = b.id
              AND w.window_start = CASE b.period WHEN 'total' THEN 'epoch'::timestamptz ELSE date_trunc(b.period, now(), 'UTC') END
        GROUP BY b.scope`,
    );
    return rows;
  }
}

const ROLLBACK = Symbol('rollback');

/**
 * The reservation: each window (inserted at its first call) takes `$4` into reserved only while spent + reserved is
 * below its limit; the reservation rows are written only when every window took it. Returns the windows that took it.
 */
const RESERVE = `WITH k AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::bigint[]) WITH ORDINALITY AS k(id, ws, lim, n)),
  up AS (
    INSERT INTO budget_windows AS w (budget_id, window_start, limit_micros_usd, reserved_micros_usd, calls)
    SELECT id, ws, lim, $4, 1 FROM k ORDER BY n
    ON CONFLICT (budget_id, window_start) DO UPDATE
      SET reserved_micros_usd = w.reserved_micros_usd + EXCLUDED.reserved_micros_usd, limit_micros_usd = EXCLUDED.limit_micros_usd,
          calls = w.calls + 1, updated_at = now()
      WHERE w.spent_micros_usd + w.reserved_micros_usd < EXCLUDED.limit_micros_usd
    RETURNING w.budget_id, w.window_start
  ),
  held AS (
    INSERT INTO budget_reservations (id, budget_id, window_start, micros_usd, expires_at)
    SELECT $5, budget_id, window_start, $4, now() + make_interval(secs => $6) FROM up
    WHERE (SELECT count(*) FROM up) = (SELECT count(*) FROM k)
  )
  SELECT budget_id FROM up`;
