import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat generations hold the one lease primitive (core/lease) instead of a heartbeat timestamp: a per-generation token
 * and an expiry in database time (GATEWAY_CHAT_GENERATION_STALE_AFTER is the lease length). Rows in flight at upgrade
 * keep their owner, get a token and expire at their last heartbeat + 30 s. SQL valid on Postgres 15 and PGlite.
 */
export class ChatGenerationLease1795400000000 implements MigrationInterface {
  name = 'ChatGenerationLease1795400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_session_generations ADD COLUMN lease_token text, ADD COLUMN lease_expires_at timestamptz`);
    await q.query(`UPDATE chat_session_generations SET lease_token = owner || ':' || id, lease_expires_at = heartbeat_at + interval '30 seconds'`);
    await q.query(
      `ALTER TABLE chat_session_generations ALTER COLUMN lease_token SET NOT NULL, ALTER COLUMN lease_expires_at SET NOT NULL, DROP COLUMN heartbeat_at`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_session_generations ADD COLUMN heartbeat_at timestamptz NOT NULL DEFAULT now()`);
    await q.query(`UPDATE chat_session_generations SET heartbeat_at = lease_expires_at - interval '30 seconds'`);
    await q.query(`ALTER TABLE chat_session_generations DROP COLUMN lease_token, DROP COLUMN lease_expires_at`);
  }
}
