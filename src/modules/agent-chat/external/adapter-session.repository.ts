import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import type { SessionRow } from '../agent-chat-rows';
import { ADAPTER_LEASE } from '../agent-chat-sql';

/** The adapter-session lease's statements (docs/design.md §11.3) and the native session's state on the session row. */
@Injectable()
export class AdapterSessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async find(sessionId: string): Promise<SessionRow | null> {
    const { rows } = await execSql<SessionRow>(this.manager, `SELECT * FROM agent_chat_sessions WHERE id = $1`, [sessionId]);
    return rows[0] ?? null;
  }

  /** Takes the session's adapter for this worker when nobody holds it (or the holder's lease expired). */
  claim(sessionId: string, owner: string, token: string, leaseMs: number): Promise<boolean> {
    return ADAPTER_LEASE.claim(this.manager, sessionId, owner, token, leaseMs, `runtime_kind = 'external_agent'`);
  }

  heartbeat(sessionId: string, token: string, leaseMs: number): Promise<boolean> {
    return ADAPTER_LEASE.heartbeat(this.manager, sessionId, token, leaseMs);
  }

  release(sessionId: string, token: string): Promise<boolean> {
    return ADAPTER_LEASE.release(this.manager, sessionId, token);
  }

  /** The live holder of the session's adapter (null when none, or its lease expired). */
  async liveOwner(sessionId: string): Promise<string | null> {
    const { rows } = await execSql<{ owner: string }>(
      this.manager,
      `SELECT adapter_owner AS owner FROM agent_chat_sessions WHERE id = $1 AND adapter_token IS NOT NULL AND ${ADAPTER_LEASE.liveSql}`,
      [sessionId],
    );
    return rows[0]?.owner ?? null;
  }

  /** Records the native session (and state) while `token` holds the adapter. */
  async setNative(sessionId: string, token: string, nativeSessionId: string, state: string, error = ''): Promise<boolean> {
    const { affected } = await execSql(
      this.manager,
      `UPDATE agent_chat_sessions SET native_session_id = $3, adapter_state = $4, adapter_error = $5, updated_at = now()
        WHERE id = $1 AND ${ADAPTER_LEASE.heldBy(2)}`,
      [sessionId, token, nativeSessionId, state, error],
    );
    return affected > 0;
  }

  /** A session whose adapter could not be opened (no lease needed: nobody holds it). */
  async markFailed(sessionId: string, error: string): Promise<void> {
    await execSql(
      this.manager,
      `UPDATE agent_chat_sessions SET adapter_state = 'failed', adapter_error = $2, ${ADAPTER_LEASE.clearSet}, updated_at = now() WHERE id = $1`,
      [sessionId, error],
    );
  }

  /** `close`: the adapter is given up by whoever holds it (its heartbeat then fails and it ends the process). */
  async markClosed(sessionId: string): Promise<void> {
    await execSql(this.manager, `UPDATE agent_chat_sessions SET adapter_state = 'closed', ${ADAPTER_LEASE.clearSet}, updated_at = now() WHERE id = $1`, [
      sessionId,
    ]);
  }

  /** Hands a claimed turn back (its session's adapter lives on another worker, which is asked to run it). */
  async unclaimTurn(turnId: string, token: string): Promise<boolean> {
    const { affected } = await execSql(
      this.manager,
      `UPDATE agent_chat_turns SET status = 'queued', attempts = GREATEST(attempts - 1, 0), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, enqueued_at = now(), updated_at = now()
        WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
      [turnId, token],
    );
    return affected > 0;
  }
}
