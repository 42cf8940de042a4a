import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns of each old table, in the order the old CREATE TABLE listed them. */
const TASK_COLUMNS = `id, tenant_id, task_id, run_id, step_id, kind, status, reason, action_summary, details, action_hash,
  requested_by, resolved_by, resolution_note, created_at, resolved_at`;
const TURN_COLUMNS = `id, tenant_id, session_id, turn_id, adapter_id, workspace, tool_call_id, tool_kind, tool_name, options,
  scope_choices, status, decision, scope, path, selected_option, grant_id, note, waiter, created_at, expires_at, resolved_at`;

/**
 * One approvals store for every runtime that asks (the approvals module): `task_approvals` (a task run's gates) and
 * `agent_chat_approvals` (an External Agent turn's permission requests) become one table `approvals`, whose `runtime`
 * says who asked — `task_run` (with `task_id`, `run_id`, `step_id`) or `agent_chat_turn` (with `session_id`,
 * `turn_id`, `adapter_id`) — and whose other columns are what that runtime's request carries. Every row is copied with
 * its id (the URLs that name it stay valid); a task approval's `resolution_note` is the one `note` column. The grants
 * operators leave behind become `approval_grants` (renamed; same rows). `down` splits the rows back.
 */
export class OneApprovalsStore1796800000000 implements MigrationInterface {
  name = 'OneApprovalsStore1796800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE approvals (
        id              text PRIMARY KEY,
        tenant_id       text NOT NULL,
        runtime         text NOT NULL,
        status          text NOT NULL,
        note            text NOT NULL DEFAULT '',
        requested_by    text NOT NULL DEFAULT '',
        resolved_by     text NOT NULL DEFAULT '',
        created_at      timestamptz NOT NULL DEFAULT now(),
        resolved_at     timestamptz,
        task_id         text,
        run_id          text,
        step_id         text,
        kind            text,
        reason          text NOT NULL DEFAULT '',
        action_summary  jsonb NOT NULL DEFAULT '[]'::jsonb,
        details         jsonb NOT NULL DEFAULT '{}'::jsonb,
        action_hash     text NOT NULL DEFAULT '',
        session_id      text REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        turn_id         text,
        adapter_id      text,
        workspace       text NOT NULL DEFAULT '',
        tool_call_id    text NOT NULL DEFAULT '',
        tool_kind       text,
        tool_name       text,
        options         jsonb NOT NULL DEFAULT '[]'::jsonb,
        scope_choices   jsonb NOT NULL DEFAULT '[]'::jsonb,
        decision        text,
        scope           text,
        path            text,
        selected_option text,
        grant_id        text,
        waiter          text,
        expires_at      timestamptz
      )`);
    await q.query(`
      INSERT INTO approvals (runtime, id, tenant_id, task_id, run_id, step_id, kind, status, reason, action_summary, details, action_hash,
        requested_by, resolved_by, note, created_at, resolved_at)
      SELECT 'task_run', ${TASK_COLUMNS} FROM task_approvals`);
    await q.query(`INSERT INTO approvals (runtime, ${TURN_COLUMNS}) SELECT 'agent_chat_turn', ${TURN_COLUMNS} FROM agent_chat_approvals`);
    await q.query(`DROP TABLE task_approvals`);
    await q.query(`DROP TABLE agent_chat_approvals`);
    await q.query(`CREATE INDEX approvals_task ON approvals (tenant_id, task_id, created_at) WHERE task_id IS NOT NULL`);
    await q.query(`CREATE INDEX approvals_run ON approvals (run_id) WHERE run_id IS NOT NULL`);
    await q.query(`CREATE INDEX approvals_session ON approvals (session_id, created_at) WHERE session_id IS NOT NULL`);
    await q.query(`CREATE INDEX approvals_pending ON approvals (runtime, tenant_id, created_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX approvals_resolved ON approvals (runtime, resolved_at) WHERE status <> 'pending'`);
    await q.query(`ALTER TABLE agent_chat_grants RENAME TO approval_grants`);
    await q.query(`ALTER INDEX agent_chat_grants_match RENAME TO approval_grants_match`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER INDEX approval_grants_match RENAME TO agent_chat_grants_match`);
    await q.query(`ALTER TABLE approval_grants RENAME TO agent_chat_grants`);
    await q.query(`
      CREATE TABLE task_approvals (
        id               text PRIMARY KEY,
        tenant_id        text NOT NULL,
        task_id          text NOT NULL,
        run_id           text NOT NULL,
        step_id          text,
        kind             text NOT NULL,
        status           text NOT NULL,
        reason           text NOT NULL DEFAULT '',
        action_summary   jsonb NOT NULL DEFAULT '[]'::jsonb,
        details          jsonb NOT NULL DEFAULT '{}'::jsonb,
        action_hash      text NOT NULL DEFAULT '',
        requested_by     text NOT NULL DEFAULT '',
        resolved_by      text NOT NULL DEFAULT '',
        resolution_note  text NOT NULL DEFAULT '',
        created_at       timestamptz NOT NULL DEFAULT now(),
        resolved_at      timestamptz
      )`);
    await q.query(`CREATE INDEX task_approvals_task_idx ON task_approvals (tenant_id, task_id, created_at)`);
    await q.query(`CREATE INDEX task_approvals_run_idx ON task_approvals (run_id)`);
    await q.query(`CREATE INDEX task_approvals_pending ON task_approvals (tenant_id, created_at) WHERE status = 'pending'`);
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
      INSERT INTO task_approvals (${TASK_COLUMNS})
      SELECT id, tenant_id, task_id, run_id, step_id, kind, status, reason, action_summary, details, action_hash,
        requested_by, resolved_by, note, created_at, resolved_at
        FROM approvals WHERE runtime = 'task_run'`);
    await q.query(`INSERT INTO agent_chat_approvals (${TURN_COLUMNS}) SELECT ${TURN_COLUMNS} FROM approvals WHERE runtime = 'agent_chat_turn'`);
    await q.query(`DROP TABLE approvals`);
  }
}
