import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tenant's pending task approvals, newest last (the MCP server's `list_pending_approvals`): a partial index
 * holds only the rows still waiting, so the listing stays an index scan however many resolved approvals the table keeps.
 */
export class PendingTaskApprovals1795950000000 implements MigrationInterface {
  name = 'PendingTaskApprovals1795950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX task_approvals_pending ON task_approvals (tenant_id, created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX task_approvals_pending`);
  }
}
