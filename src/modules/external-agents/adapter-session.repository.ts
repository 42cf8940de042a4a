import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import { Lease } from '@core/lease';
import type { AdapterSessionRow } from './external-agents.types';

/**
 * The adapter-session lease (docs/design.md §11.3): the worker whose ACP adapter process holds an External Agent session's
 * native session. The same primitive as turns and runs; later turns of the session run on that worker.
 */
const ADAPTER_LEASE = new Lease({
  table: 'agent_chat_sessions',
  id: 'id',
  owner: 'adapter_owner',
  token: 'adapter_token',
  expiresAt: 'adapter_lease_expires_at',
});

/**
 * The adapter-session lease's statements and the native session's state: the adapter columns of an Agent Chat session
 * row (AdapterSessionRow), which this module keeps; Agent Chat keeps the rest of the row.
 */
@Injectable()
export class AdapterSessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async find(sessionId: string): Promise<AdapterSessionRow | null> {
    const { rows } = await execSql<AdapterSessionRow>(this.manager, `SELECT * FROM agent_chat_sessions WHERE id = $1`, [sessionId]);
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
}
