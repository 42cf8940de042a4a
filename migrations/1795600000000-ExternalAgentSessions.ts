import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * External-agent sessions (docs/design.md §11.3): an Agent Chat session of `runtime_kind: external_agent` keeps its
 * ACP adapter's native session id and the lease of the worker whose adapter process holds it (the one lease primitive:
 * owner, token, expiry in database time). `adapter_state`: starting → ready | failed; closed after `close`.
 */
export class ExternalAgentSessions1795600000000 implements MigrationInterface {
  name = 'ExternalAgentSessions1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE agent_chat_sessions
        ADD COLUMN native_session_id text NOT NULL DEFAULT '',
        ADD COLUMN adapter_state text NOT NULL DEFAULT '',
        ADD COLUMN adapter_error text NOT NULL DEFAULT '',
        ADD COLUMN adapter_owner text,
        ADD COLUMN adapter_token text,
        ADD COLUMN adapter_lease_expires_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE agent_chat_sessions
        DROP COLUMN native_session_id, DROP COLUMN adapter_state, DROP COLUMN adapter_error,
        DROP COLUMN adapter_owner, DROP COLUMN adapter_token, DROP COLUMN adapter_lease_expires_at`);
  }
}
