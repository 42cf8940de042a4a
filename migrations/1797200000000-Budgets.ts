import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spend budgets (docs/budgets.md): a limit per period for a tenant, an API key or a saved agent. `budget_windows` holds
 * each period's counters — spent (the usage ledger's cost of every settled call) and reserved (the worst case of calls
 * in flight) — so admission is one conditional row update, exact across api and worker processes. A reservation row
 * lets a worker give back what a dead process had reserved once it expires. `tasks.api_key_id` and
 * `agent_chat_sessions.api_key_id` name the key that started the work, whose budget its model calls count against.
 */
export class Budgets1797200000000 implements MigrationInterface {
  name = 'Budgets1797200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE budgets (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      name text NOT NULL DEFAULT '',
      scope text NOT NULL,
      subject_id text NOT NULL DEFAULT '',
      period text NOT NULL,
      limit_micros_usd bigint NOT NULL,
      thresholds integer[] NOT NULL DEFAULT '{}',
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, scope, subject_id, period)
    )`);
    await q.query(`CREATE INDEX budgets_tenant_created ON budgets (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE TABLE budget_windows (
      budget_id text NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      limit_micros_usd bigint NOT NULL,
      spent_micros_usd bigint NOT NULL DEFAULT 0,
      reserved_micros_usd bigint NOT NULL DEFAULT 0,
      calls bigint NOT NULL DEFAULT 0,
      thresholds_reached integer[] NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (budget_id, window_start)
    )`);
    await q.query(`CREATE TABLE budget_reservations (
      id text NOT NULL,
      budget_id text NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      micros_usd bigint NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (id, budget_id)
    )`);
    await q.query(`CREATE INDEX budget_reservations_expiry ON budget_reservations (expires_at)`);
    await q.query(`ALTER TABLE tasks ADD COLUMN api_key_id text`);
    await q.query(`ALTER TABLE agent_chat_sessions ADD COLUMN api_key_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_chat_sessions DROP COLUMN api_key_id`);
    await q.query(`ALTER TABLE tasks DROP COLUMN api_key_id`);
    await q.query(`DROP TABLE budget_reservations`);
    await q.query(`DROP TABLE budget_windows`);
    await q.query(`DROP TABLE budgets`);
  }
}
