import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent Chat assistant messages carry the same runtime identity for every runtime (docs/api.md §4): `span_id` (the
 * turn's span in the prompt's trace) and `workspace` (the directory an agent or External Agent turn ran in).
 */
export class AgentChatMessageSpans1796500000000 implements MigrationInterface {
  name = 'AgentChatMessageSpans1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_chat_messages ADD COLUMN span_id text, ADD COLUMN workspace text NOT NULL DEFAULT ''`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_chat_messages DROP COLUMN span_id, DROP COLUMN workspace`);
  }
}
