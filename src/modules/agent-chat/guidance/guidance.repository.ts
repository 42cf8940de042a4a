import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PreparedStatement, queryPrepared } from '@core/database/prepared-statement';
import { execSql } from '@core/database/sql';
import { randomHex } from '@core/context/random-hex';
import type { GuidanceRow, TurnRow } from '../agent-chat-rows';
import { ACTIVE } from '../agent-chat-sql';
import { AgentChatRepository } from '../agent-chat.repository';

const PENDING_FOR_RUN = new PreparedStatement(
  `SELECT 1 FROM agent_chat_turns t JOIN agent_chat_guidance g ON g.session_id = t.session_id AND g.status = 'pending'
    WHERE t.run_id = $1 AND t.tenant_id = $2 AND t.status IN ('queued', 'running', 'awaiting_approval') LIMIT 1`,
);

/** Guidance rows (docs/api.md §5, docs/design.md §11.5): pending items, edits while pending, exactly-once consumption with its receipt. */
@Injectable()
export class GuidanceRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly chats: AgentChatRepository,
  ) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * A new pending item, unless the session already has `max` pending (false then; the session row is locked first so
   * concurrent posts cannot both take the last place); a guidance_id the session already has fails with a unique violation.
   */
  async insertGuidance(g: Pick<GuidanceRow, 'session_id' | 'guidance_id' | 'tenant_id' | 'content' | 'metadata'>, max: number): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      await execSql(m, `SELECT 1 FROM agent_chat_sessions WHERE id = $1 FOR UPDATE`, [g.session_id]);
      const { rows } = await execSql<{ n: number }>(m, `SELECT count(*)::int AS n FROM agent_chat_guidance WHERE session_id = $1 AND status = 'pending'`, [
        g.session_id,
      ]);
      if (max > 0 && rows[0].n >= max) return false;
      await execSql(
        m,
        `INSERT INTO agent_chat_guidance (session_id, guidance_id, tenant_id, content, metadata, status) VALUES ($1, $2, $3, $4, $5, 'pending')`,
        [g.session_id, g.guidance_id, g.tenant_id, g.content, JSON.stringify(g.metadata)],
      );
      return true;
    });
  }

  async guidance(sessionId: string, status?: string): Promise<GuidanceRow[]> {
    const { rows } = await execSql<GuidanceRow>(
      this.manager,
      `SELECT * FROM agent_chat_guidance WHERE session_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY seq`,
      [sessionId, status ?? null],
    );
    return rows;
  }

  async findGuidance(sessionId: string, guidanceId: string): Promise<GuidanceRow | null> {
    const { rows } = await execSql<GuidanceRow>(this.manager, `SELECT * FROM agent_chat_guidance WHERE session_id = $1 AND guidance_id = $2`, [
      sessionId,
      guidanceId,
    ]);
    return rows[0] ?? null;
  }

  /** Edits or removes an item only while it is pending (a consumption holding it is waited for): false otherwise. */
  async changePendingGuidance(sessionId: string, guidanceId: string, content: string | null): Promise<boolean> {
    const { affected } =
      content === null
        ? await execSql(this.manager, `DELETE FROM agent_chat_guidance WHERE session_id = $1 AND guidance_id = $2 AND status = 'pending'`, [
            sessionId,
            guidanceId,
          ])
        : await execSql(
            this.manager,
            `UPDATE agent_chat_guidance SET content = $3, updated_at = now() WHERE session_id = $1 AND guidance_id = $2 AND status = 'pending'`,
            [sessionId, guidanceId, content],
          );
    return affected > 0;
  }

  /** Is guidance pending for the session whose active turn runs `runId`? (No transaction: a hint before taking it.) */
  /** Asked before every model call of every agent-loop run: prepared. */
  async guidancePendingForRun(tenantId: string, runId: string): Promise<boolean> {
    return (await queryPrepared(this.dataSource, PENDING_FOR_RUN, [runId, tenantId])).length > 0;
  }

  async activeTurnOfRun(manager: EntityManager, tenantId: string, runId: string): Promise<TurnRow | null> {
    const { rows } = await execSql<TurnRow>(manager, `SELECT * FROM agent_chat_turns WHERE run_id = $1 AND tenant_id = $2 AND ${ACTIVE}`, [runId, tenantId]);
    return rows[0] ?? null;
  }

  /**
   * Consumes the session's pending guidance for `turn` in the caller's transaction: each item becomes a `role=user`
   * message of the turn's segment (metadata.guidance_id), is marked consumed with its receipt, and the turn's assistant
   * message moves after them (the reply answers the guidance too). Oldest first; returns what was taken.
   */
  async consumeGuidanceIn(manager: EntityManager, turn: TurnRow, modelCallIndex: number): Promise<Array<GuidanceRow & { message_id: string }>> {
    const session = await this.chats.lockSession(manager, turn.tenant_id, turn.session_id);
    if (!session) return [];
    const { rows } = await execSql<GuidanceRow>(
      manager,
      `SELECT * FROM agent_chat_guidance WHERE session_id = $1 AND status = 'pending' ORDER BY seq FOR UPDATE`,
      [turn.session_id],
    );
    if (rows.length === 0) return [];
    const assistant = await this.chats.findMessage(turn.session_id, turn.assistant_message_id, manager);
    const taken = rows.map((g) => ({ ...g, message_id: `msg_${randomHex(12)}` }));
    await this.chats.insertMessages(
      manager,
      session,
      taken.map((g) => ({
        id: g.message_id,
        role: 'user' as const,
        content: g.content,
        status: 'completed',
        runtime_kind: turn.runtime_kind,
        segment_id: turn.segment_id,
        turn_id: turn.id,
        task_id: turn.task_id,
        run_id: turn.run_id,
        provider: turn.provider,
        model: turn.model,
        capabilities: assistant?.capabilities ?? {},
        metadata: { ...g.metadata, guidance_id: g.guidance_id },
      })),
    );
    for (const g of taken) {
      await execSql(
        manager,
        `UPDATE agent_chat_guidance SET status = 'consumed', consumed_turn_id = $3, consumed_run_id = $4, model_call_index = $5, message_id = $6,
                consumed_at = now(), updated_at = now()
          WHERE session_id = $1 AND guidance_id = $2`,
        [g.session_id, g.guidance_id, turn.id, turn.run_id, modelCallIndex, g.message_id],
      );
    }
    if (assistant) {
      await execSql(manager, `UPDATE agent_chat_messages SET sequence = $2 WHERE id = $1`, [assistant.id, session.next_sequence]);
      await this.chats.updateSession(manager, session.id, { next_sequence: session.next_sequence + 1 });
    }
    return taken;
  }
}
