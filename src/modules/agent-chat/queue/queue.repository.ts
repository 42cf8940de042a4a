import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql, NOW, type SetMap, setClause } from '@core/database/sql';
import type { QueueItemRow } from '../agent-chat-rows';

/** The queued-next FIFO's rows: waiting items, edits while waiting, one drainer per item, recovery. */
@Injectable()
export class QueueRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Queues an item unless the session already has `max` waiting (or starting) items: null then. The session row is
   * locked first, so concurrent prompts cannot both see room for the last place.
   */
  async insertQueueItem(
    item: Omit<QueueItemRow, 'seq' | 'status' | 'turn_id' | 'error' | 'created_at' | 'updated_at'>,
    max: number,
  ): Promise<QueueItemRow | null> {
    return this.dataSource.transaction(async (m) => {
      await execSql(m, `SELECT 1 FROM agent_chat_sessions WHERE id = $1 FOR UPDATE`, [item.session_id]);
      // An id the caller derived (a schedule's fire) that is already queued: the same item, not a second one.
      const { rows: same } = await execSql<QueueItemRow>(m, `SELECT * FROM agent_chat_queue WHERE session_id = $1 AND id = $2`, [item.session_id, item.id]);
      if (same[0]) return same[0];
      const { rows: held } = await execSql<{ n: number }>(
        m,
        `SELECT count(*)::int AS n FROM agent_chat_queue WHERE session_id = $1 AND status IN ('queued', 'starting')`,
        [item.session_id],
      );
      if (max > 0 && held[0].n >= max) return null;
      return this.insertIn(m, item);
    });
  }

  private async insertIn(
    m: EntityManager,
    item: Omit<QueueItemRow, 'seq' | 'status' | 'turn_id' | 'error' | 'created_at' | 'updated_at'>,
  ): Promise<QueueItemRow> {
    const { rows } = await execSql<QueueItemRow>(
      m,
      `INSERT INTO agent_chat_queue (id, session_id, tenant_id, content, runtime_kind, provider, model, workspace, system_prompt, host_paths, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued') RETURNING *`,
      [
        item.id,
        item.session_id,
        item.tenant_id,
        item.content,
        item.runtime_kind,
        item.provider,
        item.model,
        item.workspace,
        item.system_prompt,
        item.host_paths,
      ],
    );
    return rows[0];
  }

  async queueItems(sessionId: string): Promise<QueueItemRow[]> {
    const { rows } = await execSql<QueueItemRow>(
      this.manager,
      `SELECT * FROM agent_chat_queue WHERE session_id = $1 AND status IN ('queued', 'starting') ORDER BY seq`,
      [sessionId],
    );
    return rows;
  }

  async findQueueItem(sessionId: string, id: string): Promise<QueueItemRow | null> {
    const { rows } = await execSql<QueueItemRow>(this.manager, `SELECT * FROM agent_chat_queue WHERE session_id = $1 AND id = $2`, [sessionId, id]);
    return rows[0] ?? null;
  }

  /** Edits a waiting item (`null` removes it); false when it started, failed or does not exist. */
  async changeQueuedItem(sessionId: string, id: string, set: SetMap | null): Promise<QueueItemRow | null | false> {
    if (set === null) {
      const { affected } = await execSql(this.manager, `DELETE FROM agent_chat_queue WHERE session_id = $1 AND id = $2 AND status = 'queued'`, [sessionId, id]);
      return affected > 0 ? null : false;
    }
    const c = setClause({ ...set, updated_at: NOW }, 3);
    const { rows } = await execSql<QueueItemRow>(
      this.manager,
      `UPDATE agent_chat_queue SET ${c.sql} WHERE session_id = $1 AND id = $2 AND status = 'queued' RETURNING *`,
      [sessionId, id, ...c.params],
    );
    return rows[0] ?? false;
  }

  /** Takes the session's oldest waiting item for starting, only while the session has no active turn (SKIP LOCKED: one drainer wins). */
  async claimQueueItem(sessionId: string): Promise<QueueItemRow | null> {
    const { rows } = await execSql<QueueItemRow>(
      this.manager,
      `UPDATE agent_chat_queue SET status = 'starting', updated_at = now()
        WHERE id = (SELECT q.id FROM agent_chat_queue q
                     WHERE q.session_id = $1 AND q.status = 'queued'
                       AND NOT EXISTS (SELECT 1 FROM agent_chat_turns t WHERE t.session_id = q.session_id AND t.status IN ('queued', 'running', 'awaiting_approval'))
                       AND NOT EXISTS (SELECT 1 FROM agent_chat_queue s WHERE s.session_id = q.session_id AND s.status = 'starting')
                     ORDER BY q.seq LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [sessionId],
    );
    return rows[0] ?? null;
  }

  async settleQueueItem(
    id: string,
    set: { status: 'queued' | 'started' | 'failed'; turn_id?: string; error?: { type: string; message: string } },
  ): Promise<void> {
    const c = setClause({ ...set, updated_at: NOW }, 2);
    await execSql(this.manager, `UPDATE agent_chat_queue SET ${c.sql} WHERE id = $1`, [id, ...c.params]);
  }

  /** Sessions with waiting items and no active turn (the recovery pass drains them). */
  async sessionsToDrain(limit: number): Promise<string[]> {
    const { rows } = await execSql<{ session_id: string }>(
      this.manager,
      `SELECT DISTINCT q.session_id FROM agent_chat_queue q
        WHERE q.status = 'queued'
          AND NOT EXISTS (SELECT 1 FROM agent_chat_turns t WHERE t.session_id = q.session_id AND t.status IN ('queued', 'running', 'awaiting_approval'))
        LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.session_id);
  }

  /** Items left `starting` by a process that died: started when their turn exists (request id `queue_<id>`), else waiting again. */
  async recoverStartingItems(olderThanMs: number): Promise<void> {
    await execSql(
      this.manager,
      `UPDATE agent_chat_queue q SET status = CASE WHEN t.id IS NULL THEN 'queued' ELSE 'started' END, turn_id = t.id, updated_at = now()
         FROM agent_chat_queue q2 LEFT JOIN agent_chat_turns t ON t.request_id = 'queue_' || q2.id
        WHERE q.id = q2.id AND q.status = 'starting' AND q.updated_at < now() - ($1 * interval '1 millisecond')`,
      [olderThanMs],
    );
  }
}
