import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql, NOW, type SetMap, setClause } from '@core/database/sql';
import type { MessageRow, NewMessage, NewTurn, SessionRow, TurnRow } from './agent-chat-rows';
import { ACTIVE, MESSAGE_TAIL_COLUMNS, messageValues, TURN_LEASE } from './agent-chat-sql';

/** Sessions, messages and turns of Agent Chat. Reads outside transactions take the tenant; writes take the caller's manager. */
@Injectable()
export class AgentChatRepository {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(fn);
  }

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async insertSession(
    row: Omit<
      SessionRow,
      | 'created_at'
      | 'updated_at'
      | 'last_activity_at'
      | 'closed_at'
      | 'next_sequence'
      | 'message_count'
      | 'turns_used'
      | 'native_session_id'
      | 'adapter_state'
      | 'adapter_error'
      | 'adapter_owner'
      | 'adapter_token'
      | 'adapter_lease_expires_at'
      | 'agent_id'
      | 'agent_version'
      | 'api_key_id'
    > &
      Partial<Pick<SessionRow, 'agent_id' | 'agent_version' | 'api_key_id'>>,
  ): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO agent_chat_sessions (id, tenant_id, title, runtime_kind, provider, model, workspace, system_prompt, adapter_id, capabilities, status, session_started_at, adapter_state, agent_id, agent_version, api_key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $4 = 'external_agent' THEN 'starting' ELSE '' END, $13, $14, $15)`,
      [
        row.id,
        row.tenant_id,
        row.title,
        row.runtime_kind,
        row.provider,
        row.model,
        row.workspace,
        row.system_prompt,
        row.adapter_id,
        JSON.stringify(row.capabilities),
        row.status,
        row.session_started_at,
        row.agent_id ?? '',
        row.agent_version ?? null,
        row.api_key_id ?? null,
      ],
    );
  }

  async findSession(tenantId: string, id: string, manager: EntityManager = this.manager): Promise<SessionRow | null> {
    const { rows } = await execSql<SessionRow>(manager, `SELECT * FROM agent_chat_sessions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return rows[0] ?? null;
  }

  /** Row-locks the session (serialises turn starts, cancels and deletes of one session). */
  async lockSession(manager: EntityManager, tenantId: string, id: string): Promise<SessionRow | null> {
    const { rows } = await execSql<SessionRow>(manager, `SELECT * FROM agent_chat_sessions WHERE id = $1 AND tenant_id = $2 FOR UPDATE`, [id, tenantId]);
    return rows[0] ?? null;
  }

  async listSessions(tenantId: string, limit: number): Promise<SessionRow[]> {
    const { rows } = await execSql<SessionRow>(
      this.manager,
      `SELECT * FROM agent_chat_sessions WHERE tenant_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2`,
      [tenantId, limit],
    );
    return rows;
  }

  async deleteSession(manager: EntityManager, tenantId: string, id: string): Promise<boolean> {
    const { affected } = await execSql(manager, `DELETE FROM agent_chat_sessions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return affected > 0;
  }

  async updateSession(manager: EntityManager, id: string, set: SetMap): Promise<void> {
    const c = setClause({ ...set, updated_at: NOW }, 2);
    await execSql(manager, `UPDATE agent_chat_sessions SET ${c.sql} WHERE id = $1`, [id, ...c.params]);
  }

  async messages(sessionId: string, manager: EntityManager = this.manager): Promise<MessageRow[]> {
    const { rows } = await execSql<MessageRow>(manager, `SELECT * FROM agent_chat_messages WHERE session_id = $1 ORDER BY sequence`, [sessionId]);
    return rows;
  }

  /**
   * Everything a new turn is decided on, in one read: the session, its active turn, its latest turn and its last
   * message (turn and message timestamps come back as ISO strings).
   */
  async turnContext(
    tenantId: string,
    sessionId: string,
  ): Promise<{ session: SessionRow; active: TurnRow | null; latest: TurnRow | null; lastMessage: MessageRow | null } | null> {
    const { rows } = await execSql<SessionRow & { ctx_active: TurnRow | null; ctx_latest: TurnRow | null; ctx_last_message: MessageRow | null }>(
      this.manager,
      `SELECT s.*,
              (SELECT to_jsonb(t) FROM agent_chat_turns t WHERE t.session_id = s.id AND t.status IN ('queued', 'running', 'awaiting_approval')) AS ctx_active,
              (SELECT to_jsonb(t) FROM agent_chat_turns t WHERE t.session_id = s.id ORDER BY t.created_at DESC, t.id DESC LIMIT 1) AS ctx_latest,
              (SELECT to_jsonb(m) FROM agent_chat_messages m WHERE m.session_id = s.id ORDER BY m.sequence DESC LIMIT 1) AS ctx_last_message
         FROM agent_chat_sessions s WHERE s.id = $1 AND s.tenant_id = $2`,
      [sessionId, tenantId],
    );
    const r = rows[0];
    if (!r) return null;
    const { ctx_active: active, ctx_latest: latest, ctx_last_message: lastMessage, ...session } = r;
    return { session: session as SessionRow, active, latest, lastMessage };
  }

  /** What a worker needs to run a turn, in one read: the session, its transcript in order, and whether guidance is pending. */
  async turnInputs(tenantId: string, sessionId: string): Promise<{ session: SessionRow; messages: MessageRow[]; pendingGuidance: number } | null> {
    const { rows } = await execSql<{ session: SessionRow; messages: MessageRow[]; pending: string }>(
      this.manager,
      `SELECT to_jsonb(s) AS session,
              (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.sequence), '[]'::jsonb) FROM agent_chat_messages m WHERE m.session_id = s.id) AS messages,
              (SELECT count(*) FROM agent_chat_guidance g WHERE g.session_id = s.id AND g.status = 'pending') AS pending
         FROM agent_chat_sessions s WHERE s.id = $1 AND s.tenant_id = $2`,
      [sessionId, tenantId],
    );
    const r = rows[0];
    return r ? { session: r.session, messages: r.messages, pendingGuidance: Number(r.pending) } : null;
  }

  async findMessage(sessionId: string, id: string, manager: EntityManager = this.manager): Promise<MessageRow | null> {
    const { rows } = await execSql<MessageRow>(manager, `SELECT * FROM agent_chat_messages WHERE session_id = $1 AND id = $2`, [sessionId, id]);
    return rows[0] ?? null;
  }

  /** Appends messages after the session's last (the session row must be locked by the caller). */
  async insertMessages(manager: EntityManager, session: SessionRow, messages: NewMessage[]): Promise<void> {
    await this.insertMessageRows(manager, session.id, session.next_sequence, messages);
    session.next_sequence += messages.length;
    session.message_count += messages.length;
    await this.updateSession(manager, session.id, { next_sequence: session.next_sequence, message_count: session.message_count });
  }

  /** One multi-row INSERT of messages with sequences from `first` on. */
  private async insertMessageRows(manager: EntityManager, sessionId: string, first: number, messages: NewMessage[]): Promise<void> {
    const params: unknown[] = [];
    const values = messages.map((m, i) => {
      const row = [m.id, sessionId, first + i, ...messageValues(m)];
      params.push(...row);
      return `(${row.map((_, k) => `$${i * row.length + k + 1}`).join(', ')})`;
    });
    await execSql(manager, `INSERT INTO agent_chat_messages (id, session_id, sequence, ${MESSAGE_TAIL_COLUMNS}) VALUES ${values.join(', ')}`, params);
  }

  /**
   * A new turn in one statement (the hot path of every prompt; a statement is its own transaction): the session row is
   * updated first — it is the lock and it hands out the message sequences — then the turn (a second active one of the
   * session fails the whole statement on the unique index) and its messages. Returns the turn and the session as they
   * now are (timestamps as ISO strings), or null when the session is not the tenant's.
   */
  async openTurn(t: NewTurn, messages: NewMessage[], workspace: string): Promise<{ turn: TurnRow; session: SessionRow } | null> {
    const params: unknown[] = [
      t.id,
      t.tenant_id,
      t.session_id,
      t.runtime_kind,
      t.status,
      t.segment_id,
      t.user_message_id,
      t.assistant_message_id,
      t.task_id,
      t.run_id,
      t.stream_id,
      t.provider,
      t.model,
      t.system_prompt,
      t.request_id,
      t.trace_id,
      messages.length,
      workspace,
    ];
    const values = messages.map((m, i) => {
      const row = [m.id, i, ...messageValues(m)];
      const at = params.length;
      params.push(...row);
      // id, ord (an int), then MESSAGE_TAIL_COLUMNS (capabilities and metadata at 12 and 13 are jsonb).
      return `(${row.map((_, k) => `$${at + k + 1}${k === 1 ? '::int' : k === 12 || k === 13 ? '::jsonb' : ''}`).join(', ')})`;
    });
    const { rows } = await execSql<{ session: SessionRow; turn: TurnRow }>(
      this.manager,
      `WITH s AS (
         UPDATE agent_chat_sessions
            SET next_sequence = next_sequence + $17, message_count = message_count + $17, turns_used = turns_used + 1, status = 'running',
                session_started_at = COALESCE(session_started_at, now()), last_activity_at = now(), closed_at = NULL, workspace = $18, updated_at = now()
          WHERE id = $3 AND tenant_id = $2 RETURNING *
       ), t AS (
         INSERT INTO agent_chat_turns (id, tenant_id, session_id, runtime_kind, status, segment_id, user_message_id, assistant_message_id, task_id, run_id,
                                       stream_id, provider, model, system_prompt, request_id, trace_id, enqueued_at)
         SELECT $1, $2, s.id, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, CASE WHEN $4 = 'model' THEN now() END FROM s
         RETURNING *
       ), m AS (
         INSERT INTO agent_chat_messages (id, session_id, sequence, ${MESSAGE_TAIL_COLUMNS})
         SELECT v.id, s.id, s.next_sequence - $17 + v.ord, ${MESSAGE_TAIL_COLUMNS.split(', ')
           .map((c) => `v.${c}`)
           .join(', ')}
           FROM s, (VALUES ${values.join(', ')}) AS v(id, ord, ${MESSAGE_TAIL_COLUMNS})
         RETURNING 1
       )
       SELECT to_jsonb(s) AS session, to_jsonb(t) AS turn FROM s, t`,
      params,
    );
    return rows[0] ?? null;
  }

  async updateMessage(manager: EntityManager, id: string, set: SetMap): Promise<void> {
    const c = setClause({ ...set, updated_at: NOW }, 2);
    await execSql(manager, `UPDATE agent_chat_messages SET ${c.sql} WHERE id = $1`, [id, ...c.params]);
  }

  async deleteMessages(manager: EntityManager, ids: string[]): Promise<void> {
    await execSql(manager, `DELETE FROM agent_chat_messages WHERE id = ANY($1)`, [ids]);
  }

  async findTurn(id: string, manager: EntityManager = this.manager): Promise<TurnRow | null> {
    const { rows } = await execSql<TurnRow>(manager, `SELECT * FROM agent_chat_turns WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async activeTurn(sessionId: string, manager: EntityManager = this.manager): Promise<TurnRow | null> {
    const { rows } = await execSql<TurnRow>(manager, `SELECT * FROM agent_chat_turns WHERE session_id = $1 AND ${ACTIVE}`, [sessionId]);
    return rows[0] ?? null;
  }

  async activeTurnsOfTenant(tenantId: string): Promise<TurnRow[]> {
    const { rows } = await execSql<TurnRow>(this.manager, `SELECT * FROM agent_chat_turns WHERE tenant_id = $1 AND ${ACTIVE} ORDER BY created_at`, [tenantId]);
    return rows;
  }

  async latestTurn(sessionId: string, manager: EntityManager = this.manager): Promise<TurnRow | null> {
    const { rows } = await execSql<TurnRow>(manager, `SELECT * FROM agent_chat_turns WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, [
      sessionId,
    ]);
    return rows[0] ?? null;
  }

  /** Updates a turn only while it is in one of `from` (and, with `token`, only while that token holds its lease): false otherwise. */
  async updateTurn(manager: EntityManager, id: string, set: SetMap, guard: { from?: readonly string[]; token?: string } = {}): Promise<boolean> {
    const c = setClause({ ...set, updated_at: NOW }, 2);
    const params: unknown[] = [id, ...c.params];
    let where = 'id = $1';
    if (guard.from) {
      params.push([...guard.from]);
      where += ` AND status = ANY($${params.length})`;
    }
    if (guard.token) {
      params.push(guard.token);
      where += ` AND ${TURN_LEASE.heldBy(params.length)}`;
    }
    const { affected } = await execSql(manager, `UPDATE agent_chat_turns SET ${c.sql} WHERE ${where}`, params);
    return affected > 0;
  }
}
