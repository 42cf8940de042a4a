import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (docs/webhooks.md): subscriptions to the public feed's event types, and their deliveries. A delivery row is
 * written (with the event's payload) before it is attempted, in the transaction that moves the subscription's
 * `feed_cursor`, so an event is delivered at least once whatever process dies; UNIQUE (webhook_id, event_id) keeps it one
 * delivery, whose id is the `webhook-id` every attempt sends.
 */
export class Webhooks1797100000000 implements MigrationInterface {
  name = 'Webhooks1797100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      url text NOT NULL,
      event_types text[] NOT NULL,
      description text NOT NULL DEFAULT '',
      secret text NOT NULL,
      status text NOT NULL DEFAULT 'enabled',
      disabled_reason text,
      failure_streak integer NOT NULL DEFAULT 0,
      feed_cursor bigint NOT NULL,
      claim_owner text,
      claim_token text,
      claim_until timestamptz,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX webhooks_tenant_created ON webhooks (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      tenant_id text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      feed_cursor bigint NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      last_status_code integer,
      last_error text,
      last_response text,
      created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
      delivered_at timestamptz,
      UNIQUE (webhook_id, event_id)
    )`);
    await q.query(`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, feed_cursor) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
