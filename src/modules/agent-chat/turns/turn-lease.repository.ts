import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import { storableText } from '@core/database/storable';
import type { TurnRow } from '../agent-chat-rows';
import { ACTIVE, TURN_LEASE } from '../agent-chat-sql';

/** The turn lease's statements (docs/design.md §11.3): claim, guard, heartbeat, recovery of lost workers' turns, the running partial. */
@Injectable()
export class TurnLeaseRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Claims a model turn for this worker: queued, or running under an expired lease. Returns the turn as claimed, or
   * why not (`held` with the lease's remaining milliseconds, or `gone` when it is finished or unknown).
   */
  async claimTurn(
    id: string,
    owner: string,
    token: string,
    leaseMs: number,
  ): Promise<{ turn: TurnRow; previousStatus: string } | { reason: 'held'; remainingMs: number } | { reason: 'gone' }> {
    // One statement on the hot path: the claim returns the turn and the status it had; its reply is running from now
    // (the message's status and start, as an agent turn's when its run starts).
    const { rows } = await execSql<TurnRow & { previous_status: string }>(
      this.manager,
      `WITH before AS (SELECT id, status FROM agent_chat_turns WHERE id = $1 FOR UPDATE),
       claimed AS (
         UPDATE agent_chat_turns t SET ${TURN_LEASE.claimSet(2, 3, 4)}, status = 'running', attempts = t.attempts + 1, started_at = COALESCE(t.started_at, now()), updated_at = now()
           FROM before
          WHERE t.id = before.id AND t.runtime_kind IN ('model', 'external_agent') AND t.status IN ('queued', 'running') AND (t.lease_token IS NULL OR t.lease_token = $3 OR ${TURN_LEASE.expiredSql})
          RETURNING t.*, before.status AS previous_status
       ), reply AS (
         UPDATE agent_chat_messages m SET status = 'running', started_at = COALESCE(m.started_at, claimed.started_at), updated_at = now()
           FROM claimed WHERE m.id = claimed.assistant_message_id AND m.status IN ('queued', 'running')
       )
       SELECT * FROM claimed`,
      [id, owner, token, leaseMs],
    );
    if (rows[0]) {
      const { previous_status: previousStatus, ...turn } = rows[0];
      return { turn, previousStatus };
    }
    const { rows: now } = await execSql<{ status: string; runtime_kind: string; remaining_ms: string | null }>(
      this.manager,
      `SELECT status, runtime_kind, ${TURN_LEASE.remainingMsSql} AS remaining_ms FROM agent_chat_turns WHERE id = $1`,
      [id],
    );
    const r = now[0];
    if (!r || !['queued', 'running'].includes(r.status) || r.runtime_kind === 'agent') return { reason: 'gone' };
    return { reason: 'held', remainingMs: Number(r.remaining_ms ?? 0) };
  }

  /** Locks the turn in the caller's transaction and proves `token` still holds it. */
  guardTurn(manager: EntityManager, id: string, token: string): Promise<boolean> {
    return TURN_LEASE.guard(manager, id, token);
  }

  heartbeat(id: string, token: string, leaseMs: number): Promise<boolean> {
    return TURN_LEASE.heartbeat(this.manager, id, token, leaseMs);
  }

  /** Active turns a recovery pass looks at: model turns queued and not enqueued lately or running under an expired lease; agent turns. */
  async turnsToRecover(enqueuedBefore: Date, limit: number): Promise<TurnRow[]> {
    const { rows } = await execSql<TurnRow>(
      this.manager,
      `SELECT * FROM agent_chat_turns
        WHERE ${ACTIVE} AND (
          (runtime_kind IN ('model', 'external_agent') AND status = 'queued' AND (enqueued_at IS NULL OR enqueued_at < $1))
          OR (runtime_kind IN ('model', 'external_agent') AND status = 'running' AND ${TURN_LEASE.expiredSql})
          OR runtime_kind = 'agent')
        ORDER BY created_at LIMIT $2`,
      [enqueuedBefore, limit],
    );
    return rows;
  }

  /** Embedded boot: turns running under another (earlier) owner expire now, so this process takes them over at once. */
  async expireTurnsHeldByOthers(owner: string): Promise<number> {
    const { affected } = await execSql(
      this.manager,
      `UPDATE agent_chat_turns SET lease_expires_at = now() - interval '1 second' WHERE status = 'running' AND lease_owner IS DISTINCT FROM $1`,
      [owner],
    );
    return affected;
  }

  /** Gives a running turn's lease up (a draining worker hands it over); false when `token` no longer held it. */
  releaseTurn(id: string, token: string): Promise<boolean> {
    return TURN_LEASE.release(this.manager, id, token);
  }

  /** Hands a claimed external-agent turn back (its session's adapter lives on another worker, which is asked to run it). */
  async unclaimTurn(turnId: string, token: string): Promise<boolean> {
    const { affected } = await execSql(
      this.manager,
      `UPDATE agent_chat_turns SET status = 'queued', attempts = GREATEST(attempts - 1, 0), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, enqueued_at = now(), updated_at = now()
        WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
      [turnId, token],
    );
    return affected > 0;
  }

  async markEnqueued(id: string): Promise<void> {
    await execSql(this.manager, `UPDATE agent_chat_turns SET enqueued_at = now() WHERE id = $1`, [id]);
  }

  /** Writes a running model turn's partial reply, only while `token` holds the turn. */
  async savePartial(turnId: string, token: string, messageId: string, content: string): Promise<boolean> {
    const { affected } = await execSql(
      this.manager,
      `UPDATE agent_chat_messages SET content = $3, updated_at = now()
        WHERE id = $2 AND EXISTS (SELECT 1 FROM agent_chat_turns WHERE id = $1 AND ${TURN_LEASE.heldBy(4)})`,
      [turnId, messageId, storableText(content), token],
    );
    return affected > 0;
  }
}
