import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tasks.client_ref`: a client's own name for a task (the ACP agent's editor session id), so a client that lost its
 * memory — an editor restarted on another machine — finds the task again (`GET /hecate/v1/tasks?client_ref=`).
 */
export class TaskClientRef1797300000000 implements MigrationInterface {
  name = 'TaskClientRef1797300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN client_ref text`);
    await q.query(`CREATE INDEX tasks_client_ref ON tasks (tenant_id, client_ref, created_at DESC) WHERE client_ref IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tasks_client_ref`);
    await q.query(`ALTER TABLE tasks DROP COLUMN client_ref`);
  }
}
