import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ChatMessageEntity } from './chat-message.entity';
import type { ChatProviderCallEntity } from './chat-provider-call.entity';
import type { ChatSessionEntity } from './chat-session.entity';
import { callFromRow, generationFromRow, MESSAGE_COLUMNS, messageFromRow, SESSION_COLUMNS, sessionFromRow } from './chat-rows';

/** Reads of the chat store (outside transactions). Every session read takes the tenant. */
@Injectable()
export class ChatSessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find({ tenantId, id }: { tenantId: string; id: string }): Promise<ChatSessionEntity | null> {
    const rows = await this.dataSource.query(`SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return rows.length > 0 ? sessionFromRow(rows[0]) : null;
  }

  /** The session and its active leaf message, in one read (the /v1 recording snapshot). */
  async findWithLeaf({ tenantId, id }: { tenantId: string; id: string }): Promise<{ session: ChatSessionEntity; leaf: ChatMessageEntity | null } | null> {
    const rows = (await this.dataSource.query(
      `SELECT to_jsonb(s) AS session, to_jsonb(l) AS leaf
         FROM chat_sessions s LEFT JOIN chat_session_messages l ON l.id = s.active_leaf_id
        WHERE s.id = $1 AND s.tenant_id = $2`,
      [id, tenantId],
    )) as Array<{ session: Record<string, unknown>; leaf: Record<string, unknown> | null }>;
    if (rows.length === 0) return null;
    return { session: sessionFromRow(rows[0].session), leaf: rows[0].leaf ? messageFromRow(rows[0].leaf) : null };
  }

  /** Newest first; without snapshots each lineage shows once (its tip). */
  async list({ tenantId, includeSnapshots, limit, before }: { tenantId: string; includeSnapshots: boolean; limit: number; before?: { updatedAt: Date; id: string } }) {
    const params: unknown[] = [tenantId, limit];
    let where = 'tenant_id = $1';
    if (!includeSnapshots) where += ' AND NOT pre_compression_snapshot';
    if (before) {
      params.push(before.updatedAt, before.id);
      where += " AND (date_trunc('milliseconds', updated_at), id) < ($3, $4)";
    }
    const rows = await this.dataSource.query(`SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE ${where} ORDER BY date_trunc('milliseconds', updated_at) DESC, id DESC LIMIT $2`, params);
    return (rows as Record<string, unknown>[]).map(sessionFromRow);
  }

  /** Every row of a lineage, oldest segment first. */
  async lineage({ tenantId, rootId }: { tenantId: string; rootId: string }): Promise<ChatSessionEntity[]> {
    const rows = await this.dataSource.query(
      `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE lineage_root_id = $1 AND tenant_id = $2 ORDER BY compression_segment_count, created_at`,
      [rootId, tenantId],
    );
    return (rows as Record<string, unknown>[]).map(sessionFromRow);
  }

  async messages(sessionId: string): Promise<ChatMessageEntity[]> {
    const rows = await this.dataSource.query(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence`, [sessionId]);
    return (rows as Record<string, unknown>[]).map(messageFromRow);
  }

  async message(sessionId: string, messageId: string): Promise<ChatMessageEntity | null> {
    const rows = await this.dataSource.query(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [messageId, sessionId]);
    return rows.length > 0 ? messageFromRow(rows[0]) : null;
  }

  /** Estimated tokens of the replayable path ending at `leafId` (4 characters a token). */
  async estimatedTokens(sessionId: string, leafId: string): Promise<number> {
    const rows = await this.dataSource.query(`SELECT replay_chars FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [leafId, sessionId]);
    return rows.length > 0 ? Math.ceil(Number(rows[0].replay_chars) / 4) : 0;
  }

  async calls(sessionId: string): Promise<ChatProviderCallEntity[]> {
    const rows = await this.dataSource.query(`SELECT * FROM chat_session_provider_calls WHERE session_id = $1 ORDER BY created_at, id`, [sessionId]);
    return (rows as Record<string, unknown>[]).map(callFromRow);
  }

  async call(sessionId: string, callId: string): Promise<ChatProviderCallEntity | null> {
    const rows = await this.dataSource.query(`SELECT * FROM chat_session_provider_calls WHERE id = $1 AND session_id = $2`, [callId, sessionId]);
    return rows.length > 0 ? callFromRow(rows[0]) : null;
  }

  /** In-flight generations of a session; `stale` when the owner stopped refreshing them. */
  async generations(sessionId: string, staleAfterMs: number) {
    const rows = await this.dataSource.query(generationsSql(false), [sessionId, staleAfterMs]);
    return (rows as Record<string, unknown>[]).map(generationFromRow);
  }

  async generation(id: string, staleAfterMs: number) {
    const rows = await this.dataSource.query(
      `SELECT *, heartbeat_at < now() - make_interval(secs => $2::double precision / 1000) AS stale FROM chat_session_generations WHERE id = $1`,
      [id, staleAfterMs],
    );
    return rows.length > 0 ? generationFromRow(rows[0]) : null;
  }

  /** Refreshes an owned generation; false when the row is gone (stopped elsewhere or taken over). */
  async heartbeat(id: string, owner: string): Promise<boolean> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(`UPDATE chat_session_generations SET heartbeat_at = now() WHERE id = $1 AND owner = $2`, [id, owner], true);
      return (result.affected ?? 0) > 0;
    } finally {
      await runner.release();
    }
  }

  async deleteSessions(tenantId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(`DELETE FROM chat_sessions WHERE tenant_id = $1 AND id = ANY($2)`, [tenantId, ids], true);
      return result.affected ?? 0;
    } finally {
      await runner.release();
    }
  }
}

/** The ancestors of $2 (itself first) in session $1. */
export const PATH_SQL = `
  WITH RECURSIVE path AS (
    SELECT m.*, 0 AS depth FROM chat_session_messages m WHERE m.id = $2 AND m.session_id = $1
    UNION ALL
    SELECT m.*, p.depth + 1 FROM chat_session_messages m JOIN path p ON m.id = p.parent_id
  )
  SELECT * FROM path ORDER BY depth`;

export const generationsSql = (forUpdate: boolean) =>
  `SELECT *, heartbeat_at < now() - make_interval(secs => $2::double precision / 1000) AS stale
     FROM chat_session_generations WHERE session_id = $1 ORDER BY started_at${forUpdate ? ' FOR UPDATE' : ''}`;
