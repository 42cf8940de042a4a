import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent Chat (docs/api.md §4 `/hecate/v1/agent-chat/*`, docs/api.md §5 live sessions, docs/design.md §11): sessions, their transcript
 * (model and agent segments in one list of messages), and turns. A turn is owned like a run: a lease (owner, token,
 * expiry in database time) held by the worker running it. At most one active turn per session (the busy rule) is a
 * unique partial index, so two api processes cannot both start one. SQL valid on Postgres 15 and PGlite.
 */
export class AgentChat1795500000000 implements MigrationInterface {
  name = 'AgentChat1795500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_chat_sessions (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        title text NOT NULL,
        runtime_kind text NOT NULL,
        provider text NOT NULL DEFAULT '',
        model text NOT NULL DEFAULT '',
        workspace text NOT NULL DEFAULT '',
        system_prompt text NOT NULL DEFAULT '',
        adapter_id text NOT NULL DEFAULT '',
        capabilities jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL,
        turns_used integer NOT NULL DEFAULT 0,
        message_count integer NOT NULL DEFAULT 0,
        next_sequence integer NOT NULL DEFAULT 1,
        session_started_at timestamptz,
        last_activity_at timestamptz NOT NULL DEFAULT now(),
        closed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agent_chat_sessions_tenant_updated ON agent_chat_sessions (tenant_id, updated_at DESC)`);
    await q.query(`
      CREATE TABLE agent_chat_turns (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        runtime_kind text NOT NULL,
        status text NOT NULL,
        segment_id text NOT NULL,
        user_message_id text NOT NULL,
        assistant_message_id text NOT NULL,
        task_id text,
        run_id text,
        stream_id text NOT NULL,
        provider text NOT NULL DEFAULT '',
        model text NOT NULL DEFAULT '',
        system_prompt text NOT NULL DEFAULT '',
        cancel_requested boolean NOT NULL DEFAULT false,
        attempts integer NOT NULL DEFAULT 0,
        error_kind text NOT NULL DEFAULT '',
        error text NOT NULL DEFAULT '',
        request_id text,
        trace_id text,
        lease_owner text,
        lease_token text,
        lease_expires_at timestamptz,
        enqueued_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX agent_chat_turns_one_active ON agent_chat_turns (session_id) WHERE status IN ('queued', 'running', 'awaiting_approval')`,
    );
    await q.query(
      `CREATE INDEX agent_chat_turns_active ON agent_chat_turns (status, lease_expires_at) WHERE status IN ('queued', 'running', 'awaiting_approval')`,
    );
    await q.query(`CREATE INDEX agent_chat_turns_session ON agent_chat_turns (session_id, created_at)`);
    await q.query(`
      CREATE TABLE agent_chat_messages (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        sequence integer NOT NULL,
        role text NOT NULL,
        content text NOT NULL DEFAULT '',
        status text NOT NULL,
        runtime_kind text NOT NULL,
        segment_id text NOT NULL,
        turn_id text,
        task_id text,
        run_id text,
        provider text NOT NULL DEFAULT '',
        model text NOT NULL DEFAULT '',
        capabilities jsonb NOT NULL DEFAULT '{}',
        error jsonb,
        metadata jsonb NOT NULL DEFAULT '{}',
        diff text,
        base_tree text,
        timing jsonb,
        run_activity jsonb,
        request_id text,
        trace_id text,
        started_at timestamptz,
        completed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (session_id, sequence)
      )`);
    // Guidance (docs/api.md §5 inject-user-message, docs/design.md §11.5): a row first, announced second; consumed exactly once at a
    // model-call boundary, with its receipt (turn, run, model-call index, the transcript message it became).
    await q.query(`
      CREATE TABLE agent_chat_guidance (
        session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        guidance_id text NOT NULL,
        tenant_id text NOT NULL,
        seq bigserial NOT NULL,
        content text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL,
        consumed_turn_id text,
        consumed_run_id text,
        model_call_index integer,
        message_id text,
        consumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, guidance_id)
      )`);
    await q.query(`CREATE INDEX agent_chat_guidance_pending ON agent_chat_guidance (session_id, seq) WHERE status = 'pending'`);
    // Queued-next (docs/api.md §1 and §5 `on_busy: enqueue`): prompts waiting for the session's active turn to end, with the
    // runtime / model / workspace snapshot of the moment they were queued; drained in order by the server.
    await q.query(`
      CREATE TABLE agent_chat_queue (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES agent_chat_sessions (id) ON DELETE CASCADE,
        tenant_id text NOT NULL,
        seq bigserial NOT NULL,
        content text NOT NULL,
        runtime_kind text NOT NULL,
        provider text NOT NULL DEFAULT '',
        model text NOT NULL DEFAULT '',
        workspace text NOT NULL DEFAULT '',
        system_prompt text NOT NULL DEFAULT '',
        host_paths boolean NOT NULL,
        status text NOT NULL,
        turn_id text,
        error jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agent_chat_queue_waiting ON agent_chat_queue (session_id, seq) WHERE status IN ('queued', 'starting')`);
    // Reverts of a message's captured changes run on a worker (the api never opens a workspace, docs/design.md §11.2).
    await q.query(`
      CREATE TABLE agent_chat_reverts (
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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE agent_chat_reverts`);
    await q.query(`DROP TABLE agent_chat_queue`);
    await q.query(`DROP TABLE agent_chat_guidance`);
    await q.query(`DROP TABLE agent_chat_messages`);
    await q.query(`DROP TABLE agent_chat_turns`);
    await q.query(`DROP TABLE agent_chat_sessions`);
  }
}
