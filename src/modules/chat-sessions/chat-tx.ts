import { execSql, setClause } from '@core/database/sql';
import type { DataSource, EntityManager } from 'typeorm';
import { charsOf, isReplayable, newMessageId } from './chat-message';
import { CALL_COLUMNS_INSERT, InsertBatch, MESSAGE_COLUMNS_INSERT, renderInsert, shiftParams } from './chat-insert-batch';
import { type ChatMessageRow, type ChatSessionRow, generationFromRow, linkFromRow, MESSAGE_COLUMNS, messageFromRow, TreeLink } from './chat-rows';
import { GENERATION_LEASE, generationsSql, PATH_SQL } from './chat-session.repository';
import { insertSessionRow, runGuardedWrite } from './chat-session-writes';
import type { LeafInfo, MessagePatch, NewGeneration, NewMessage, NewProviderCall } from './chat-write-types';

/** A write without the session lock needed a read: it has to run locked instead. */
export class NeedsLockError extends Error {}

/**
 * One write transaction on a locked session row (`SELECT … FOR UPDATE`): every writer of a session
 * serialises here, so sequences are assigned gap-free in the inserting transaction, and a compaction
 * that won a race is seen by the next writer. Uses only its EntityManager (PGlite has one connection).
 *
 * Unlocked mode (`guarded`): the same writes computed from a snapshot read earlier, sent as one statement
 * whose session UPDATE only matches if nothing was appended, no branch switched and no compaction happened
 * since; the inserts ride on that UPDATE. Any read it would need throws NeedsLockError.
 */
export class ChatTx {
  private dirty = false;
  private readonly children: ChatTx[] = [];
  /** Inserts not sent yet: they go out with the next statement's round trip, or with the session update at the end. */
  private pending: InsertBatch[] = [];
  /** Messages this transaction read or wrote (the rows are locked behind the session row). */
  private readonly known = new Map<string, ChatMessageRow>();
  private readonly expected: { nextSequence: number; activeLeafId: string | null };
  private readonly baseCounts: { messages: number; calls: number };

  constructor(
    private readonly m: EntityManager,
    readonly session: ChatSessionRow,
    private leaf: LeafInfo | null,
    leafMessage?: ChatMessageRow,
    private readonly guarded = false,
  ) {
    if (leafMessage) this.known.set(leafMessage.id, leafMessage);
    this.expected = { nextSequence: session.nextSequence, activeLeafId: session.activeLeafId };
    this.baseCounts = { messages: session.messageCount, calls: session.providerCallCount };
  }

  get activeLeaf(): LeafInfo | null {
    return this.leaf;
  }

  private async exec(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[]; affected: number }> {
    if (this.guarded) throw new NeedsLockError(sql.slice(0, 60));
    return execSql(this.m, sql, params);
  }

  /** Runs a statement after the pending inserts (which it may need to see). */
  private async run(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[]; affected: number }> {
    if (this.pending.length > 0) await this.withPending('SELECT 1', []);
    return this.exec(sql, params);
  }

  /**
   * Runs `main` together with the pending inserts as one statement (data-modifying CTEs). `main` does not
   * see their rows (same snapshot), so only a statement that does not read them may ride along.
   */
  private async withPending(main: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[]; affected: number }> {
    if (this.pending.length === 0) return this.exec(main, params);
    const all: unknown[] = [];
    const ctes = this.pending.map((b, i) => `w${i} AS (${renderInsert(b, all)})`);
    this.pending = [];
    // The main statement's rows and count are its own; the CTEs' inserts are checked (FKs) at its end.
    return this.exec(`WITH ${ctes.join(', ')} ${shiftParams(main, params, all)}`, all);
  }

  async message(id: string): Promise<ChatMessageRow | null> {
    const cached = this.known.get(id);
    if (cached) return cached;
    const { rows } = await this.run(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [id, this.session.id]);
    const found = rows.length > 0 ? messageFromRow(rows[0]) : null;
    if (found) this.known.set(id, found);
    return found;
  }

  /** Root first. */
  async path(leafId: string | null): Promise<ChatMessageRow[]> {
    if (!leafId) return [];
    const { rows } = await this.run(PATH_SQL, [this.session.id, leafId]);
    return rows.map(messageFromRow).reverse();
  }

  async links(): Promise<TreeLink[]> {
    const { rows } = await this.run(`SELECT id, parent_id, sequence FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence`, [this.session.id]);
    return rows.map(linkFromRow);
  }

  async byClientRequestId(clientRequestId: string): Promise<ChatMessageRow | null> {
    const { rows } = await this.run(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE session_id = $1 AND client_request_id = $2`, [
      this.session.id,
      clientRequestId,
    ]);
    return rows.length > 0 ? messageFromRow(rows[0]) : null;
  }

  async firstChild(parentId: string): Promise<ChatMessageRow | null> {
    const { rows } = await this.run(`SELECT ${MESSAGE_COLUMNS} FROM chat_session_messages WHERE parent_id = $1 ORDER BY sequence LIMIT 1`, [parentId]);
    return rows.length > 0 ? messageFromRow(rows[0]) : null;
  }

  async hasChildren(parentId: string): Promise<boolean> {
    const { rows } = await this.run(`SELECT 1 FROM chat_session_messages WHERE parent_id = $1 LIMIT 1`, [parentId]);
    return rows.length > 0;
  }

  async generations() {
    const { rows } = await this.run(generationsSql(true), [this.session.id]);
    return rows.map(generationFromRow);
  }

  async insertGeneration(g: NewGeneration): Promise<void> {
    const lease = GENERATION_LEASE.grantValues(7, 8, 9);
    await this.run(
      `INSERT INTO chat_session_generations (id, session_id, leaf_key, message_id, kind, previous_status, ${lease.columns})
       VALUES ($1, $2, $3, $4, $5, $6, ${lease.values})`,
      [g.id, this.session.id, g.leafKey, g.messageId, g.kind, g.previousStatus, g.owner, g.token, g.leaseMs],
    );
  }

  /** False when the row was already gone (taken over or stopped elsewhere). Without `token`: whoever held it. */
  async deleteGeneration(id: string, token?: string): Promise<boolean> {
    const { affected } = token
      ? await this.run(`DELETE FROM chat_session_generations WHERE id = $1 AND ${GENERATION_LEASE.heldBy(2)}`, [id, token])
      : await this.run(`DELETE FROM chat_session_generations WHERE id = $1`, [id]);
    return affected > 0;
  }

  async insertCall(call: NewProviderCall): Promise<void> {
    this.pending.push({
      table: 'chat_session_provider_calls',
      columns: CALL_COLUMNS_INSERT,
      rows: [
        {
          id: call.id,
          session_id: this.session.id,
          request_id: call.requestId,
          provider: call.provider,
          provider_kind: call.providerKind,
          model: call.model,
          requested_model: call.requestedModel,
          route_reason: call.routeReason,
          status: call.status,
          cost_micros_usd: call.costMicrosUsd,
          prompt_tokens: call.promptTokens,
          completion_tokens: call.completionTokens,
          total_tokens: call.promptTokens + call.completionTokens,
          created_at: call.createdAt ?? new Date(),
        },
      ],
    });
    const s = this.session;
    s.providerCallCount += 1;
    s.lastModel = call.model;
    s.lastProvider = call.provider;
    s.lastCostMicrosUsd = call.costMicrosUsd;
    s.lastRequestId = call.requestId;
    this.dirty = true;
  }

  /** Inserts `items` as a chain under `parentId` (each under the previous) with the next sequences. */
  async append(parentId: string | null, items: NewMessage[]): Promise<ChatMessageRow[]> {
    if (items.length === 0) return [];
    let parentCount = 0;
    let parentChars = 0;
    if (parentId) {
      const known = this.known.get(parentId);
      if (known) {
        parentCount = known.replayCount;
        parentChars = known.replayChars;
      } else if (this.leaf?.id === parentId) {
        parentCount = this.leaf.replayCount;
        parentChars = this.leaf.replayChars;
      } else {
        const { rows } = await this.run(`SELECT replay_count, replay_chars FROM chat_session_messages WHERE id = $1 AND session_id = $2`, [
          parentId,
          this.session.id,
        ]);
        parentCount = rows.length > 0 ? Number(rows[0].replay_count) : 0;
        parentChars = rows.length > 0 ? Number(rows[0].replay_chars) : 0;
      }
    }
    const out: ChatMessageRow[] = [];
    const now = new Date();
    let parent = parentId;
    for (const item of items) {
      const status = item.status ?? 'complete';
      parentCount += isReplayable(status) ? 1 : 0;
      parentChars += isReplayable(status) ? charsOf(item.message) : 0;
      out.push({
        id: item.id ?? newMessageId(),
        sessionId: this.session.id,
        sequence: this.session.nextSequence++,
        parentId: parent,
        replayCount: parentCount,
        replayChars: parentChars,
        role: item.message.role,
        status,
        kind: item.kind ?? 'message',
        producedByCallId: item.producedByCallId ?? null,
        messageJson: item.message,
        errorJson: item.error ?? null,
        clientRequestId: item.clientRequestId ?? null,
        createdAt: now,
        updatedAt: now,
      });
      parent = out[out.length - 1].id;
    }
    this.pending.push({
      table: 'chat_session_messages',
      columns: MESSAGE_COLUMNS_INSERT,
      rows: out.map((m) => ({
        id: m.id,
        session_id: m.sessionId,
        sequence: m.sequence,
        parent_id: m.parentId,
        replay_count: m.replayCount,
        replay_chars: m.replayChars,
        role: m.role,
        status: m.status,
        kind: m.kind,
        produced_by_call_id: m.producedByCallId,
        message_json: m.messageJson,
        error_json: m.errorJson,
        client_request_id: m.clientRequestId,
        created_at: m.createdAt,
        updated_at: m.updatedAt,
      })),
    });
    for (const m of out) this.known.set(m.id, m);
    this.session.messageCount += out.length;
    this.dirty = true;
    return out;
  }

  /** Updates a message; `updated_at` is the returned time (the same the caller shows). */
  async updateMessage(id: string, patch: MessagePatch): Promise<Date> {
    const now = new Date();
    const set = setClause(
      {
        updated_at: now,
        message_json: patch.message,
        status: patch.status,
        produced_by_call_id: patch.producedByCallId,
        error_json: patch.error,
        replay_count: patch.replayCount,
        replay_chars: patch.replayChars,
      },
      3,
    );
    await this.run(`UPDATE chat_session_messages SET ${set.sql} WHERE id = $1 AND session_id = $2`, [id, this.session.id, ...set.params]);
    this.known.delete(id);
    if (this.leaf?.id === id) {
      this.leaf = {
        ...this.leaf,
        status: patch.status ?? this.leaf.status,
        replayCount: patch.replayCount ?? this.leaf.replayCount,
        replayChars: patch.replayChars ?? this.leaf.replayChars,
      };
    }
    return now;
  }

  setActiveLeaf(leaf: LeafInfo | null): void {
    this.session.activeLeafId = leaf?.id ?? null;
    this.leaf = leaf;
    this.dirty = true;
  }

  /** Marks the session row changed (title, prompt, lineage fields set directly on `session`). */
  touch(): void {
    this.dirty = true;
  }

  /** Creates another session in this transaction (a compaction's continuation); flushed with this one. */
  async createSession(row: ChatSessionRow): Promise<ChatTx> {
    if (this.pending.length > 0) await this.withPending('SELECT 1', []);
    await insertSessionRow(this.m, row);
    const child = new ChatTx(this.m, row, null);
    this.children.push(child);
    return child;
  }

  /** Points every row of a lineage at its new tip. */
  async setLineageTip(rootId: string, tipId: string): Promise<void> {
    await this.run(`UPDATE chat_sessions SET lineage_tip_id = $2 WHERE lineage_root_id = $1 AND tenant_id = $3`, [rootId, tipId, this.session.tenantId]);
    this.session.lineageTipId = tipId;
  }

  /**
   * Guarded mode: sends the inserts and the session counters as one statement that applies only if the
   * session is where the snapshot saw it. False when it was not (nothing was written).
   */
  async flushGuarded(dataSource: DataSource, asyncCommit: boolean): Promise<boolean> {
    const s = this.session;
    const rowsOf = (table: InsertBatch['table']) => this.pending.filter((b) => b.table === table).flatMap((b) => b.rows);
    const calls = rowsOf('chat_session_provider_calls');
    const messages = rowsOf('chat_session_messages');
    this.pending = [];
    const sessionParams: unknown[] = [
      s.nextSequence,
      s.messageCount - this.baseCounts.messages,
      s.providerCallCount - this.baseCounts.calls,
      s.lastModel,
      s.lastProvider,
      s.lastCostMicrosUsd,
      s.lastRequestId,
      s.activeLeafId,
      s.id,
      s.tenantId,
      this.expected.nextSequence,
      this.expected.activeLeafId,
    ];
    const rows = await runGuardedWrite(dataSource, asyncCommit, sessionParams, calls, messages);
    if (rows.length === 0) return false;
    s.updatedAt = new Date(rows[0].updated_at as string | Date);
    this.dirty = false;
    return true;
  }

  /** Sends the pending inserts and the session row update (one statement). */
  async flush(): Promise<void> {
    for (const child of this.children) await child.flush();
    if (!this.dirty) {
      if (this.pending.length > 0) await this.withPending('SELECT 1', []);
      return;
    }
    const s = this.session;
    const { rows } = await this.withPending(
      `UPDATE chat_sessions SET title = $2, system_prompt = $3, user_name = $4, active_leaf_id = $5, next_sequence = $6, message_count = $7,
         provider_call_count = $8, last_model = $9, last_provider = $10, last_cost_micros_usd = $11, last_request_id = $12,
         continuation_session_id = $13, pre_compression_snapshot = $14, updated_at = now()
       WHERE id = $1 RETURNING updated_at`,
      [
        s.id,
        s.title,
        s.systemPrompt,
        s.userName,
        s.activeLeafId,
        s.nextSequence,
        s.messageCount,
        s.providerCallCount,
        s.lastModel,
        s.lastProvider,
        s.lastCostMicrosUsd,
        s.lastRequestId,
        s.continuationSessionId,
        s.preCompressionSnapshot,
      ],
    );
    if (rows[0]?.updated_at) s.updatedAt = new Date(rows[0].updated_at as string | Date);
    this.dirty = false;
  }
}
