import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-session API keys of metered external agents: an External Agent session whose adapter talks to this
 * gateway gets its own key (scope `inference`), minted by the worker that starts the adapter and revoked when the
 * process ends or the session closes. The key names its session, so the session's usage rows (which carry the key)
 * are the session's.
 */
export class AgentSessionKeys1795800000000 implements MigrationInterface {
  name = 'AgentSessionKeys1795800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN agent_chat_session_id text`);
    await q.query(`CREATE INDEX api_keys_agent_chat_session ON api_keys (agent_chat_session_id) WHERE agent_chat_session_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX api_keys_agent_chat_session`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN agent_chat_session_id`);
  }
}
