import { isoText } from '@core/database/sql';
import { Lease } from '@core/lease';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  CALL_COLUMNS,
  callFromRow,
  type ChatMessageRow,
  type ChatProviderCallRow,
  type ChatSessionRow,
  generationFromRow,
  MESSAGE_COLUMNS,
  messageFromRow,
  SESSION_COLUMNS,
  sessionFromRow,
} from './chat-rows';
import type { ChatMessageView, toProviderCallResponse } from './chat-session-view.dto';

/** Reads of the chat store (outside transactions). Every session read takes the tenant. */
@Injectable()
export class ChatSessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find({ tenantId, id }: { tenantId: string; id: string }): Promise<ChatSessionRow | null> {
    const rows = await this.dataSource.query(`SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return rows.length > 0 ? sessionFromRow(rows[0]) : null;
  }

  /** The session and its active leaf message, in one read (the /v1 recording snapshot). */
  async findWithLeaf({ tenantId, id }: { tenantId: string; id: string }): Promise<{ session: ChatSessionRow; leaf: ChatMessageRow | null } | null> {
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
  async list({
    tenantId,
    includeSnapshots,
    limit,
    before,
  }: {
    tenantId: string;
    includeSnapshots: boolean;
    limit: number;
    before?: { updatedAt: Date; id: string };
  }) {
    const params: unknown[] = [tenantId, limit];
    let where = 'tenant_id = $1';
    if (!includeSnapshots) where += ' AND NOT pre_compression_snapshot';
    if (before) {
      params.push(before.updatedAt, before.id);
      where += " AND (date_trunc('milliseconds', updated_at), id) < ($3, $4)";
    }
    const rows = await this.dataSource.query(
      `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE ${where} ORDER BY date_trunc('milliseconds', updated_at) DESC, id DESC LIMIT $2`,
      params,
    );
    return (rows as Record<string, unknown>[]).map(sessionFromRow);
  }

  /** Every row of a lineage, oldest segment first. */
  async lineage({ tenantId, rootId }: { tenantId: string; rootId: string }): Promise<ChatSessionRow[]> {
    const rows = await this.dataSource.query(
      `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE lineage_root_id = $1 AND tenant_id = $2 ORDER BY compression_segment_count, created_at`,
      [rootId, tenantId],
    );
    return (rows as Record<string, unknown>[]).map(sessionFromRow);
  }

  /**
   * The GET view's messages, rendered by Postgres as one JSON array (the shape of toChatMessageResponse):
   * the path from the root to `leafId`, or every message with `children_ids` when `leafId` is undefined.
   * Decoding 10,000 rows field by field in node-postgres costs several times the query.
   */
  async messagesView(sessionId: string, leafId: string | null | undefined): Promise<ChatMessageView[]> {
    const tree = leafId === undefined;
    if (leafId === null) return [];
    const rows = (await this.dataSource.query(messagesViewSql(tree), tree ? [sessionId] : [sessionId, leafId])) as Array<{ j: string }>;
    return JSON.parse(rows[0].j) as ChatMessageView[];
  }

  /** The session's provider calls rendered by Postgres (the shape of toProviderCallResponse). */
  async callsView(sessionId: string): Promise<Array<ReturnType<typeof toProviderCallResponse>>> {
    const rows = (await this.dataSource.query(CALLS_VIEW_SQL, [sessionId])) as Array<{ j: string }>;
    return JSON.parse(rows[0].j) as Array<ReturnType<typeof toProviderCallResponse>>;
  }

  async messages(sessionId: string): Promise<ChatMessageRow[]> {
    const rows = await this.dataSource.query(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence`, [sessionId]);
    return (rows as Record<string, unknown>[]).map(messageFromRow);
  }

  async message(sessionId: string, messageId: string): Promise<ChatMessageRow | null> {
    const rows = await this.dataSource.query(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [messageId, sessionId]);
    return rows.length > 0 ? messageFromRow(rows[0]) : null;
  }

  /** Estimated tokens of the replayable path ending at `leafId` (4 characters a token). */
  async estimatedTokens(sessionId: string, leafId: string): Promise<number> {
    const rows = await this.dataSource.query(`SELECT replay_chars FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [leafId, sessionId]);
    return rows.length > 0 ? Math.ceil(Number(rows[0].replay_chars) / 4) : 0;
  }

  async calls(sessionId: string): Promise<ChatProviderCallRow[]> {
    const rows = await this.dataSource.query(`SELECT ${CALL_COLUMNS} FROM chat_session_provider_calls c WHERE session_id = $1 ORDER BY c.created_at, c.id`, [
      sessionId,
    ]);
    return (rows as Record<string, unknown>[]).map(callFromRow);
  }

  async call(sessionId: string, callId: string): Promise<ChatProviderCallRow | null> {
    const rows = await this.dataSource.query(`SELECT ${CALL_COLUMNS} FROM chat_session_provider_calls WHERE id = $1 AND session_id = $2`, [callId, sessionId]);
    return rows.length > 0 ? callFromRow(rows[0]) : null;
  }

  /** In-flight generations of a session; `stale` when their lease expired (the owner stopped refreshing it). */
  async generations(sessionId: string) {
    const rows = await this.dataSource.query(generationsSql(false), [sessionId]);
    return (rows as Record<string, unknown>[]).map(generationFromRow);
  }

  async generation(id: string) {
    const rows = await this.dataSource.query(`SELECT *, ${GENERATION_LEASE.expiredSql} AS stale FROM chat_session_generations WHERE id = $1`, [id]);
    return rows.length > 0 ? generationFromRow(rows[0]) : null;
  }

  /** Extends a held generation's lease; false when the row is gone (stopped elsewhere or taken over). */
  heartbeat(id: string, token: string, leaseMs: number): Promise<boolean> {
    return GENERATION_LEASE.heartbeat(this.dataSource.manager, id, token, leaseMs);
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
  SELECT ${MESSAGE_COLUMNS} FROM path ORDER BY depth`;

const optional = (key: string, column: string) => `CASE WHEN ${column} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('${key}', ${column}) END`;

function messagesViewSql(tree: boolean): string {
  const path = tree
    ? ''
    : `path AS (
         SELECT id, parent_id FROM chat_session_messages WHERE id = $2 AND session_id = $1
         UNION ALL
         SELECT m.id, m.parent_id FROM chat_session_messages m JOIN path p ON m.id = p.parent_id
       ),`;
  return `
    WITH RECURSIVE ${path}
    base AS (
      SELECT m.*, row_number() OVER (PARTITION BY m.parent_id ORDER BY m.sequence) - 1 AS sibling_index,
             count(*) OVER (PARTITION BY m.parent_id) AS sibling_count
        FROM chat_session_messages m WHERE m.session_id = $1
    )
    SELECT coalesce(json_agg(
      b.message_json
      || jsonb_build_object(
           'id', b.id, 'sequence', b.sequence, 'parent_id', b.parent_id,
           'content', coalesce(b.message_json -> 'content', '""'::jsonb), 'status', b.status,
           'sibling_index', b.sibling_index, 'sibling_count', b.sibling_count,
           'created_at', ${isoText('b.created_at')}, 'updated_at', ${isoText('b.updated_at')})
      || ${optional('produced_by_call_id', 'b.produced_by_call_id')}
      || CASE WHEN b.kind = 'message' THEN '{}'::jsonb ELSE jsonb_build_object('kind', b.kind) END
      || ${optional('error', 'b.error_json')}
      || ${optional('client_request_id', 'b.client_request_id')}
      ${tree ? `|| jsonb_build_object('children_ids', (SELECT coalesce(jsonb_agg(c.id ORDER BY c.sequence), '[]'::jsonb) FROM chat_session_messages c WHERE c.parent_id = b.id))` : ''}
      ORDER BY b.sequence), '[]')::text AS j
    FROM base b ${tree ? '' : 'WHERE b.id IN (SELECT id FROM path)'}`;
}

const CALLS_VIEW_SQL = `
  SELECT coalesce(json_agg(
    jsonb_build_object(
      'id', id, 'request_id', request_id, 'provider', provider, 'provider_kind', provider_kind, 'model', model, 'status', status,
      'cost_micros_usd', cost_micros_usd, 'cost_usd', ((cost_micros_usd::numeric / 1000000)::numeric(20, 6))::text,
      'prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens, 'total_tokens', total_tokens, 'created_at', ${isoText('created_at')})
    || ${optional('requested_model', "nullif(requested_model, '')")}
    || ${optional('route_reason', "nullif(route_reason, '')")}
    ORDER BY created_at, id), '[]')::text AS j
  FROM chat_session_provider_calls WHERE session_id = $1`;

/** The lease of an in-flight generation (core/lease): token and expiry in database time. */
export const GENERATION_LEASE = new Lease({ table: 'chat_session_generations', id: 'id', owner: 'owner', token: 'lease_token', expiresAt: 'lease_expires_at' });

export const generationsSql = (forUpdate: boolean) =>
  `SELECT *, ${GENERATION_LEASE.expiredSql} AS stale
     FROM chat_session_generations WHERE session_id = $1 ORDER BY started_at${forUpdate ? ' FOR UPDATE' : ''}`;
