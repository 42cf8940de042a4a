import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Task runtime: tasks, runs, steps, artifacts, approvals, sequenced run events with the public
 * feed cursor, and retention sweep history. SQL valid on Postgres 15 and PGlite.
 */
export class TaskRuntime1795346724457 implements MigrationInterface {
  name = 'TaskRuntime1795346724457';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tasks (
        id                   text PRIMARY KEY,
        tenant_id            text NOT NULL,
        title                text NOT NULL DEFAULT '',
        prompt               text NOT NULL DEFAULT '',
        system_prompt        text NOT NULL DEFAULT '',
        execution_kind       text NOT NULL,
        execution_profile    text NOT NULL DEFAULT '',
        shell_command        text NOT NULL DEFAULT '',
        git_command          text NOT NULL DEFAULT '',
        file_path            text NOT NULL DEFAULT '',
        file_content         text NOT NULL DEFAULT '',
        file_operation       text NOT NULL DEFAULT '',
        working_directory    text NOT NULL DEFAULT '',
        workspace_mode       text NOT NULL DEFAULT '',
        repo                 text NOT NULL DEFAULT '',
        base_branch          text NOT NULL DEFAULT '',
        sandbox_allowed_root text NOT NULL DEFAULT '',
        sandbox_read_only    boolean NOT NULL DEFAULT false,
        sandbox_network      boolean NOT NULL DEFAULT false,
        priority             text NOT NULL DEFAULT '',
        timeout_ms           integer NOT NULL DEFAULT 0,
        budget_micros_usd    bigint NOT NULL DEFAULT 0,
        requested_provider   text NOT NULL DEFAULT '',
        requested_model      text NOT NULL DEFAULT '',
        mcp_servers          jsonb NOT NULL DEFAULT '[]'::jsonb,
        status               text NOT NULL DEFAULT 'not_started',
        latest_run_id        text,
        last_error           text NOT NULL DEFAULT '',
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        started_at           timestamptz,
        finished_at          timestamptz
      )`);
    await q.query(`CREATE INDEX tasks_tenant_created_idx ON tasks (tenant_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE task_runs (
        id                    text PRIMARY KEY,
        tenant_id             text NOT NULL,
        task_id               text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        number                integer NOT NULL,
        status                text NOT NULL,
        execution_kind        text NOT NULL,
        workspace_mode        text NOT NULL DEFAULT '',
        workspace_path        text NOT NULL DEFAULT '',
        model                 text NOT NULL DEFAULT '',
        provider              text NOT NULL DEFAULT '',
        provider_kind         text NOT NULL DEFAULT '',
        total_cost_micros_usd bigint NOT NULL DEFAULT 0,
        prior_cost_micros_usd bigint NOT NULL DEFAULT 0,
        last_error            text NOT NULL DEFAULT '',
        error_kind            text NOT NULL DEFAULT '',
        resumed_from_run_id   text,
        resume_reason         text NOT NULL DEFAULT '',
        checkpoint            jsonb,
        attempts              integer NOT NULL DEFAULT 0,
        lease_owner           text,
        lease_token           uuid,
        lease_expires_at      timestamptz,
        request_id            text,
        trace_id              text,
        queued_at             timestamptz,
        enqueued_at           timestamptz,
        started_at            timestamptz,
        finished_at           timestamptz,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now(),
        UNIQUE (task_id, number)
      )`);
    // One active run per task, enforced by the database.
    await q.query(`CREATE UNIQUE INDEX task_runs_one_active_idx ON task_runs (task_id) WHERE status IN ('queued', 'awaiting_approval', 'running')`);
    await q.query(`CREATE INDEX task_runs_active_idx ON task_runs (status, queued_at) WHERE status IN ('queued', 'awaiting_approval', 'running')`);
    await q.query(`CREATE INDEX task_runs_finished_idx ON task_runs (finished_at) WHERE finished_at IS NOT NULL`);

    await q.query(`
      CREATE TABLE task_steps (
        id              text PRIMARY KEY,
        tenant_id       text NOT NULL,
        task_id         text NOT NULL,
        run_id          text NOT NULL REFERENCES task_runs (id) ON DELETE CASCADE,
        step_index      integer NOT NULL,
        kind            text NOT NULL,
        title           text NOT NULL DEFAULT '',
        status          text NOT NULL,
        phase           text NOT NULL DEFAULT '',
        result          text NOT NULL DEFAULT '',
        tool_name       text NOT NULL DEFAULT '',
        idempotent      boolean NOT NULL DEFAULT false,
        input           jsonb NOT NULL DEFAULT '{}'::jsonb,
        output_summary  jsonb NOT NULL DEFAULT '{}'::jsonb,
        exit_code       integer,
        error           text NOT NULL DEFAULT '',
        error_kind      text NOT NULL DEFAULT '',
        approval_id     text,
        started_at      timestamptz,
        finished_at     timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        UNIQUE (run_id, step_index)
      )`);

    await q.query(`
      CREATE TABLE task_artifacts (
        id            text PRIMARY KEY,
        tenant_id     text NOT NULL,
        task_id       text NOT NULL,
        run_id        text NOT NULL REFERENCES task_runs (id) ON DELETE CASCADE,
        step_id       text,
        kind          text NOT NULL,
        name          text NOT NULL DEFAULT '',
        description   text NOT NULL DEFAULT '',
        mime_type     text NOT NULL DEFAULT 'text/plain',
        path          text NOT NULL DEFAULT '',
        content_text  text NOT NULL DEFAULT '',
        size_bytes    bigint NOT NULL DEFAULT 0,
        sha256        text NOT NULL DEFAULT '',
        truncated     boolean NOT NULL DEFAULT false,
        status        text NOT NULL DEFAULT 'ready',
        metadata      jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX task_artifacts_run_idx ON task_artifacts (run_id, created_at)`);
    await q.query(`CREATE INDEX task_artifacts_task_idx ON task_artifacts (task_id, created_at)`);

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

    // Events: `sequence` is gap-free per run (allocated from event_stream_heads under its row lock);
    // `feed_cursor` is stamped after commit by one stamper at a time (event_feed_head row lock), so the
    // public feed cursor grows in commit-visibility order (docs/design.md §4.2).
    await q.query(`
      CREATE TABLE task_run_events (
        id           text PRIMARY KEY,
        tenant_id    text NOT NULL,
        run_id       text NOT NULL,
        task_id      text,
        session_id   text,
        sequence     bigint NOT NULL,
        type         text NOT NULL,
        data         jsonb NOT NULL DEFAULT '{}'::jsonb,
        occurred_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
        feed_cursor  bigint,
        request_id   text,
        trace_id     text,
        UNIQUE (run_id, sequence)
      )`);
    await q.query(`CREATE UNIQUE INDEX task_run_events_cursor_idx ON task_run_events (feed_cursor)`);
    await q.query(`CREATE INDEX task_run_events_tenant_cursor_idx ON task_run_events (tenant_id, feed_cursor)`);
    await q.query(`CREATE INDEX task_run_events_unstamped_idx ON task_run_events (occurred_at) WHERE feed_cursor IS NULL`);
    await q.query(`CREATE INDEX task_run_events_task_idx ON task_run_events (task_id)`);
    await q.query(`
      CREATE TABLE event_stream_heads (
        run_id         text PRIMARY KEY,
        tenant_id      text NOT NULL,
        last_sequence  bigint NOT NULL
      )`);
    await q.query(`CREATE TABLE event_feed_head (id integer PRIMARY KEY, last_cursor bigint NOT NULL)`);
    await q.query(`INSERT INTO event_feed_head (id, last_cursor) VALUES (1, 0)`);

    await q.query(`
      CREATE TABLE retention_runs (
        id           text PRIMARY KEY,
        trigger      text NOT NULL,
        status       text NOT NULL,
        results      jsonb NOT NULL DEFAULT '{}'::jsonb,
        error        text NOT NULL DEFAULT '',
        started_at   timestamptz NOT NULL DEFAULT now(),
        finished_at  timestamptz
      )`);
    await q.query(`CREATE INDEX retention_runs_started_idx ON retention_runs (started_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'retention_runs',
      'event_feed_head',
      'event_stream_heads',
      'task_run_events',
      'task_approvals',
      'task_artifacts',
      'task_steps',
      'task_runs',
      'tasks',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
