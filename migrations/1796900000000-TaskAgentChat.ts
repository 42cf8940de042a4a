import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which tasks run Agent Chat turns (`tasks.agent_chat`): only their agent loops ask for pending guidance before a model
 * call (docs/design.md §11.5), so a run of any other task makes no such query. Existing Agent Chat tasks are marked.
 */
export class TaskAgentChat1796900000000 implements MigrationInterface {
  name = 'TaskAgentChat1796900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN agent_chat boolean NOT NULL DEFAULT false`);
    await q.query(`UPDATE tasks SET agent_chat = true WHERE id IN (SELECT task_id FROM agent_chat_turns WHERE task_id IS NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks DROP COLUMN agent_chat`);
  }
}
