import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type ChatMessageRow, type ChatSessionRow, MESSAGE_COLUMNS, messageFromRow, SESSION_COLUMNS, sessionFromRow } from './chat-rows';
import { ChatSessionNotFoundError, ChatSessionSupersededError } from './chat-sessions.errors';
import { insertSessionRow } from './chat-session-writes';
import { ChatTx, NeedsLockError } from './chat-tx';

const LOCK_SQL = `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND tenant_id = $2 FOR UPDATE`;
// The same, and the commit does not wait for the WAL flush (set_config(…, true) is transaction-local).
const LOCK_ASYNC_SQL = `SELECT ${SESSION_COLUMNS}, set_config('synchronous_commit', 'off', true) AS async_commit
  FROM chat_sessions WHERE id = $1 AND tenant_id = $2 FOR UPDATE`;
// A separate statement on purpose: after waiting for the lock, a new statement's snapshot sees the leaf the
// previous writer inserted (a join in the locking statement would read it from the older snapshot).
const LEAF_SQL = `SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE id = $1`;

/** Write transactions of the chat store. */
@Injectable()
export class ChatTranscriptRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insertSession(row: ChatSessionRow): Promise<void> {
    await insertSessionRow(this.dataSource.manager, row);
  }

  /**
   * Runs `fn` without the session lock, from a snapshot read earlier (`session` with its active leaf),
   * as one guarded statement. Answers undefined when the session moved on meanwhile or `fn` needed a read:
   * run it with `withSession` then.
   */
  async withoutLock<T>(
    snapshot: { session: ChatSessionRow; leaf: ChatMessageRow | null },
    fn: (tx: ChatTx) => Promise<T>,
    { asyncCommit = false }: { asyncCommit?: boolean } = {},
  ): Promise<T | undefined> {
    if (snapshot.session.preCompressionSnapshot) return undefined;
    const tx = new ChatTx(this.dataSource.manager, { ...snapshot.session }, snapshot.leaf, snapshot.leaf ?? undefined, true);
    try {
      const result = await fn(tx);
      return (await tx.flushGuarded(this.dataSource, asyncCommit)) ? result : undefined;
    } catch (err) {
      if (err instanceof NeedsLockError) return undefined;
      throw err;
    }
  }

  /**
   * Runs `fn` in one transaction holding the session row lock. A snapshot (pre-compression) row answers
   * 409 `chat_session.superseded` unless `allowSnapshot`; a missing row (or another tenant's) 404.
   */
  async withSession<T>(
    {
      tenantId,
      sessionId,
      allowSnapshot = false,
      asyncCommit = false,
    }: { tenantId: string; sessionId: string; allowSnapshot?: boolean; asyncCommit?: boolean },
    fn: (tx: ChatTx) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (m) => {
      const rows = (await m.query(asyncCommit ? LOCK_ASYNC_SQL : LOCK_SQL, [sessionId, tenantId])) as Record<string, unknown>[];
      if (rows.length === 0) throw new ChatSessionNotFoundError(sessionId);
      const session = sessionFromRow(rows[0]);
      if (session.preCompressionSnapshot && !allowSnapshot) throw new ChatSessionSupersededError(session.id, session.lineageTipId);
      let leaf: ChatMessageRow | undefined;
      if (session.activeLeafId) {
        const [l] = (await m.query(LEAF_SQL, [session.activeLeafId])) as Record<string, unknown>[];
        if (l) leaf = messageFromRow(l);
      }
      const tx = new ChatTx(m, session, leaf ?? null, leaf);
      const result = await fn(tx);
      await tx.flush();
      return result;
    });
  }
}
