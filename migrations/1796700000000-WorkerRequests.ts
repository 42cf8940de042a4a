import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One table for every request the api asks a worker to run and waits for (the worker-request primitive of
 * core/lease): `workspace_ops` becomes `worker_requests` with its rows kept (`args` is now `payload`) and gains a
 * lease (owner, token, expiry extended by the worker's heartbeat), and the Agent Chat reverts move into it as kind
 * `agent_chat.revert` (payload: session, message and paths; a failure keeps its stored message), after which
 * `agent_chat_reverts` goes.
 */
export class WorkerRequests1796700000000 implements MigrationInterface {
  name = 'WorkerRequests1796700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspace_ops RENAME TO worker_requests`);
    await q.query(`ALTER TABLE worker_requests RENAME COLUMN args TO payload`);
    await q.query(`ALTER INDEX workspace_ops_created RENAME TO worker_requests_created`);
    await q.query(`ALTER TABLE worker_requests ADD COLUMN lease_owner text, ADD COLUMN lease_token text, ADD COLUMN lease_expires_at timestamptz`);
    // json, not jsonb: an answer keeps its keys in the order the worker gave them (the api returns it as it came).
    await q.query(`ALTER TABLE worker_requests ALTER COLUMN result TYPE json USING result::json, ALTER COLUMN error TYPE json USING error::json`);
    await q.query(`CREATE INDEX worker_requests_finished ON worker_requests (updated_at) WHERE status IN ('done', 'failed')`);
    await q.query(`INSERT INTO worker_requests (id, tenant_id, kind, payload, status, result, error, created_at, updated_at)
      SELECT id, tenant_id, 'agent_chat.revert', jsonb_build_object('session_id', session_id, 'message_id', message_id, 'paths', paths),
             status, result::json, error::json, created_at, updated_at
        FROM agent_chat_reverts`);
    await q.query(`DROP TABLE agent_chat_reverts`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE agent_chat_reverts (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
      message_id text NOT NULL,
      paths jsonb NOT NULL,
      status text NOT NULL,
      result jsonb,
      error jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`INSERT INTO agent_chat_reverts (id, tenant_id, session_id, message_id, paths, status, result, error, created_at, updated_at)
      SELECT r.id, r.tenant_id, r.payload->>'session_id', r.payload->>'message_id', r.payload->'paths', r.status, r.result::jsonb, r.error::jsonb, r.created_at, r.updated_at
        FROM worker_requests r JOIN agent_chat_sessions s ON s.id = r.payload->>'session_id'
       WHERE r.kind = 'agent_chat.revert'`);
    await q.query(`DELETE FROM worker_requests WHERE kind = 'agent_chat.revert'`);
    await q.query(`DROP INDEX worker_requests_finished`);
    await q.query(`ALTER TABLE worker_requests ALTER COLUMN result TYPE jsonb USING result::jsonb, ALTER COLUMN error TYPE jsonb USING error::jsonb`);
    await q.query(`ALTER TABLE worker_requests DROP COLUMN lease_owner, DROP COLUMN lease_token, DROP COLUMN lease_expires_at`);
    await q.query(`ALTER INDEX worker_requests_created RENAME TO workspace_ops_created`);
    await q.query(`ALTER TABLE worker_requests RENAME COLUMN payload TO args`);
    await q.query(`ALTER TABLE worker_requests RENAME TO workspace_ops`);
  }
}
