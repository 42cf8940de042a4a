import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat sessions (docs/api.md §1 two-stream store, docs/api.md §3 message trees, docs/api.md §2 compression lineage).
 * Sessions cascade-delete their messages, provider calls and in-flight generation rows.
 */
export class ChatSessions1795345703807 implements MigrationInterface {
  name = 'ChatSessions1795345703807';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE chat_sessions (
        id                        text PRIMARY KEY,
        tenant_id                 text NOT NULL,
        title                     text NOT NULL DEFAULT '',
        system_prompt             text NOT NULL DEFAULT '',
        user_name                 text NOT NULL DEFAULT '',
        active_leaf_id            text,
        next_sequence             integer NOT NULL DEFAULT 0,
        message_count             integer NOT NULL DEFAULT 0,
        provider_call_count       integer NOT NULL DEFAULT 0,
        last_model                text,
        last_provider             text,
        last_cost_micros_usd      bigint,
        last_request_id           text,
        parent_session_id         text,
        lineage_root_id           text NOT NULL,
        lineage_tip_id            text NOT NULL,
        compression_segment_count integer NOT NULL DEFAULT 0,
        continuation_session_id   text,
        pre_compression_snapshot  boolean NOT NULL DEFAULT false,
        created_at                timestamptz NOT NULL DEFAULT now(),
        updated_at                timestamptz NOT NULL DEFAULT now()
      )`);
    // The list shows one row per lineage (its tip): the non-snapshot rows.
    await q.query(`CREATE INDEX chat_sessions_visible_idx ON chat_sessions (tenant_id, updated_at DESC, id) WHERE NOT pre_compression_snapshot`);
    await q.query(`CREATE INDEX chat_sessions_tenant_idx ON chat_sessions (tenant_id, updated_at DESC, id)`);
    await q.query(`CREATE INDEX chat_sessions_lineage_idx ON chat_sessions (lineage_root_id, compression_segment_count)`);

    await q.query(`
      CREATE TABLE chat_session_provider_calls (
        id                text PRIMARY KEY,
        session_id        text NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        request_id        text NOT NULL DEFAULT '',
        provider          text NOT NULL DEFAULT '',
        provider_kind     text NOT NULL DEFAULT '',
        model             text NOT NULL DEFAULT '',
        requested_model   text,
        route_reason      text,
        status            text NOT NULL DEFAULT 'completed',
        cost_micros_usd   bigint NOT NULL DEFAULT 0,
        prompt_tokens     integer NOT NULL DEFAULT 0,
        completion_tokens integer NOT NULL DEFAULT 0,
        total_tokens      integer NOT NULL DEFAULT 0,
        created_at        timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX chat_session_provider_calls_session_idx ON chat_session_provider_calls (session_id, created_at, id)`);

    // replay_count / replay_chars: replayable messages (every status but failed) on the path from the root up
    // to this one, and their JSON size: "how many messages has the client already sent" and "how big is the
    // context" are one read of the active leaf.
    await q.query(`
      CREATE TABLE chat_session_messages (
        id                  text PRIMARY KEY,
        session_id          text NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        sequence            integer NOT NULL,
        parent_id           text REFERENCES chat_session_messages(id) ON DELETE CASCADE,
        replay_count        integer NOT NULL,
        replay_chars        bigint NOT NULL DEFAULT 0,
        role                text NOT NULL,
        status              text NOT NULL DEFAULT 'complete',
        kind                text NOT NULL DEFAULT 'message',
        produced_by_call_id text REFERENCES chat_session_provider_calls(id) ON DELETE SET NULL,
        message_json        jsonb NOT NULL,
        error_json          jsonb,
        client_request_id   text,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT chat_session_messages_sequence_key UNIQUE (session_id, sequence)
      )`);
    await q.query(`CREATE INDEX chat_session_messages_parent_idx ON chat_session_messages (parent_id, sequence)`);
    await q.query(`CREATE INDEX chat_session_messages_call_idx ON chat_session_messages (produced_by_call_id) WHERE produced_by_call_id IS NOT NULL`);
    await q.query(
      `CREATE UNIQUE INDEX chat_session_messages_client_request_idx ON chat_session_messages (session_id, client_request_id) WHERE client_request_id IS NOT NULL`,
    );

    // In-flight generations (and compactions, leaf_key '*'): who streams what, for branch locks and stop.
    await q.query(`
      CREATE TABLE chat_session_generations (
        id              text PRIMARY KEY,
        session_id      text NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        leaf_key        text NOT NULL,
        message_id      text,
        kind            text NOT NULL,
        previous_status text,
        owner           text NOT NULL,
        started_at      timestamptz NOT NULL DEFAULT now(),
        heartbeat_at    timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT chat_session_generations_leaf_key UNIQUE (session_id, leaf_key)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE chat_session_generations`);
    await q.query(`DROP TABLE chat_session_messages`);
    await q.query(`DROP TABLE chat_session_provider_calls`);
    await q.query(`DROP TABLE chat_sessions`);
  }
}
