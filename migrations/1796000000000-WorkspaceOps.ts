import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace operations the api asks a worker to do and waits for (the api never reads or writes a workspace):
 * create-time checks of host paths, patch apply/revert, workspace removal, an Agent Chat workspace's real path. One row
 * per request: the worker claims it, runs it and stores the answer (a result, or the error envelope it raised).
 */
export class WorkspaceOps1796000000000 implements MigrationInterface {
  name = 'WorkspaceOps1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE workspace_ops (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      kind text NOT NULL,
      args jsonb NOT NULL,
      status text NOT NULL DEFAULT 'queued',
      result jsonb,
      error jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX workspace_ops_created ON workspace_ops (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE workspace_ops`);
  }
}
