import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Saved agents (docs/api.md §5 `agent_id`): a tenant's named agent definitions, every version kept (a version is
 * never changed: an update writes the next one), and the agent and version a task or an Agent Chat session ran.
 * A task also carries what its agent decided for the loop: the turn cap, the built-in tools, the approval policies.
 */
export class SavedAgents1796600000000 implements MigrationInterface {
  name = 'SavedAgents1796600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE agents (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      name text NOT NULL,
      version integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX agents_tenant_name ON agents (tenant_id, name)`);
    await q.query(`CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE TABLE agent_versions (
      agent_id text NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      version integer NOT NULL,
      tenant_id text NOT NULL,
      definition jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (agent_id, version)
    )`);
    await q.query(`ALTER TABLE tasks
      ADD COLUMN agent_id text,
      ADD COLUMN agent_version integer,
      ADD COLUMN max_turns integer NOT NULL DEFAULT 0,
      ADD COLUMN builtin_tools jsonb,
      ADD COLUMN approval_policies jsonb`);
    await q.query(`ALTER TABLE agent_chat_sessions ADD COLUMN agent_id text NOT NULL DEFAULT '', ADD COLUMN agent_version integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agent_chat_sessions DROP COLUMN agent_id, DROP COLUMN agent_version`);
    await q.query(
      `ALTER TABLE tasks DROP COLUMN agent_id, DROP COLUMN agent_version, DROP COLUMN max_turns, DROP COLUMN builtin_tools, DROP COLUMN approval_policies`,
    );
    await q.query(`DROP TABLE agent_versions`);
    await q.query(`DROP TABLE agents`);
  }
}
