import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The external-agent approval coordinator (docs/api.md §4): one row per ACP `session/request_permission` —
 * pending while a worker waits (`waiter` is its LEASE_OWNER, `turn_id` the turn it blocks), then approved | denied |
 * timed_out | cancelled with the `path` that decided it — and the grants an operator's `scope` leaves behind (allow or
 * deny, per session, per adapter + workspace + tool kind, or per adapter + tool kind; until `expires_at`). Session
 * grants go with their session; the others outlive it and retention (only their own expiry removes them).
 */
export class AgentChatApprovals1795700000000 implements MigrationInterface {
  name = 'AgentChatApprovals1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_chat_approvals (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        turn_id text,
        adapter_id text NOT NULL,
        workspace text NOT NULL DEFAULT '',
        tool_call_id text NOT NULL DEFAULT '',
        tool_kind text NOT NULL,
        tool_name text NOT NULL,
        options jsonb NOT NULL DEFAULT '[]',
        scope_choices jsonb NOT NULL DEFAULT '[]',
        status text NOT NULL,
        decision text,
        scope text,
        path text,
        selected_option text,
        grant_id text,
        note text NOT NULL DEFAULT '',
        waiter text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        resolved_at timestamptz
      )`);
    await q.query(`CREATE INDEX agent_chat_approvals_session ON agent_chat_approvals (session_id, created_at)`);
    await q.query(`CREATE INDEX agent_chat_approvals_pending ON agent_chat_approvals (status) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX agent_chat_approvals_resolved ON agent_chat_approvals (resolved_at) WHERE status <> 'pending'`);
    await q.query(`
      CREATE TABLE agent_chat_grants (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        scope text NOT NULL,
        decision text NOT NULL,
        adapter_id text NOT NULL,
        tool_kind text NOT NULL,
        workspace text,
        session_id text REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        approval_id text,
        note text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz
      )`);
    await q.query(`CREATE INDEX agent_chat_grants_match ON agent_chat_grants (tenant_id, adapter_id, tool_kind, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE agent_chat_grants`);
    await q.query(`DROP TABLE agent_chat_approvals`);
  }
}
