import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schedules (docs/schedules.md): a cron expression in a time zone or one time, what each fire does (start a task, or
 * queue an Agent Chat message), and the ledger of fires. `schedule_firings` has one row per fire time (UNIQUE (schedule_id, scheduled_for)): the row is written
 * in the transaction that moves the schedule's `next_fire_at`, under a claim (owner, token, expiry) a worker holds while
 * it fires; an expired claim is taken over, and the task's (or queued message's) id is derived from the firing's, so a
 * fire happens once whichever worker finishes it.
 */
export class Schedules1797000000000 implements MigrationInterface {
  name = 'Schedules1797000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE schedules (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      name text NOT NULL DEFAULT '',
      kind text NOT NULL,
      cron_expression text,
      timezone text NOT NULL DEFAULT 'UTC',
      run_at timestamptz,
      starts_at timestamptz,
      ends_at timestamptz,
      max_fires integer,
      catch_up text NOT NULL DEFAULT 'skip',
      catch_up_max integer NOT NULL DEFAULT 1,
      target jsonb NOT NULL,
      host_paths boolean NOT NULL DEFAULT false,
      created_by text NOT NULL,
      status text NOT NULL DEFAULT 'active',
      next_fire_at timestamptz,
      fire_count integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE status = 'active'`);
    await q.query(`CREATE INDEX schedules_tenant_created ON schedules (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE TABLE schedule_firings (
      id text PRIMARY KEY,
      schedule_id text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
      tenant_id text NOT NULL,
      scheduled_for timestamptz NOT NULL,
      status text NOT NULL,
      claim_owner text,
      claim_token text,
      claim_until timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      task_id text,
      run_id text,
      session_id text,
      queue_item_id text,
      error jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      UNIQUE (schedule_id, scheduled_for)
    )`);
    await q.query(`CREATE INDEX schedule_firings_claims ON schedule_firings (claim_until) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE schedule_firings`);
    await q.query(`DROP TABLE schedules`);
  }
}
