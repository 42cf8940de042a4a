import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { assistantMessage, canonicalClientMessage, ChatMessageJson, GeneratedReply, newCallId, newClientMessages, withSystemPrompt } from './chat-message';
import type { ChatMessageRow } from './chat-rows';
import { ChatSessionRepository } from './chat-session.repository';
import { ChatSnapshotCacheService, SessionSnapshot } from './chat-snapshot-cache.service';
import { ChatBranchBusyError, ChatSessionNotFoundError, ChatSessionSupersededError } from './chat-sessions.errors';
import { ChatTranscriptRepository } from './chat-transcript.repository';
import type { ChatTx } from './chat-tx';
import type { NewProviderCall } from './chat-write-types';

/** A `/v1/chat/completions` exchange about to be recorded into a session. */
export interface PreparedExchange {
  tenantId: string;
  sessionId: string;
  /** The request messages with the session system prompt applied (send these upstream). */
  messages: ChatMessageJson[];
  systemPrompt: string;
  /** The session as seen before the upstream call: the recording is written against it when nothing moved. */
  snapshot: SessionSnapshot;
}

export interface ExchangeResult {
  /** complete; incomplete: a stream cut by the client; failed: the upstream failed. */
  status: 'complete' | 'incomplete' | 'failed';
  reply: GeneratedReply;
  call: Omit<NewProviderCall, 'id' | 'status'>;
  error?: Record<string, unknown>;
}

export interface RecordedExchange {
  sessionId: string;
  callId: string;
  messages: ChatMessageRow[];
  /** The session as this recording left it. */
  after: SessionSnapshot;
}

/**
 * RecordChatExchange (docs/api.md §1 "Replay"): after a `/v1/chat/completions` call that names a session,
 * append only the messages the client added since the last exchange, then the reply with
 * `produced_by_call_id`, and the provider call — one transaction, under the session row lock.
 */
interface QueuedRecording {
  exchange: PreparedExchange;
  result: ExchangeResult;
  resolve: (r: RecordedExchange) => void;
  reject: (err: unknown) => void;
}

/** After a guarded write lost a race, the session's recordings take the lock directly for this long. */
const CONTENDED_MS = 2_000;

@Injectable()
export class ChatExchangeRecorderService {
  private readonly queues = new Map<string, QueuedRecording[]>();
  private readonly contendedUntil = new Map<string, number>();

  constructor(
    private readonly sessions: ChatSessionRepository,
    private readonly transcripts: ChatTranscriptRepository,
    private readonly config: AppConfig,
    private readonly cache: ChatSnapshotCacheService,
  ) {}

  /** Checks the session (404, 409 superseded, 409 busy leaf) and applies its system prompt to the request. */
  async prepare(tenantId: string, sessionId: string, requestMessages: unknown[]): Promise<PreparedExchange> {
    const snapshot = this.cache.get(tenantId, sessionId) ?? (await this.sessions.findWithLeaf({ tenantId, id: sessionId }));
    if (!snapshot) throw new ChatSessionNotFoundError(sessionId);
    const { session, leaf } = snapshot;
    if (session.preCompressionSnapshot) throw new ChatSessionSupersededError(session.id, session.lineageTipId);
    if (leaf?.status === 'in_progress') throw new ChatBranchBusyError(session.id, leaf.id, leaf.id);
    const messages = withSystemPrompt(requestMessages.map(canonicalClientMessage), session.systemPrompt);
    return { tenantId, sessionId, messages, systemPrompt: session.systemPrompt, snapshot };
  }

  /**
   * Recordings of one session queue up in this process and go out in order, a batch at a time (a hot
   * session). A batch is written in one guarded statement against the freshest snapshot this process has
   * (its last recording, else what `prepare` read) when the session did not move meanwhile — the usual
   * case; otherwise in one transaction under the session lock.
   */
  record(exchange: PreparedExchange, result: ExchangeResult): Promise<RecordedExchange> {
    return new Promise<RecordedExchange>((resolve, reject) => {
      const item: QueuedRecording = { exchange, result, resolve, reject };
      const queue = this.queues.get(exchange.sessionId);
      if (queue) {
        queue.push(item);
        return;
      }
      this.queues.set(exchange.sessionId, [item]);
      void this.drain(exchange.sessionId);
    });
  }

  private async drain(sessionId: string): Promise<void> {
    const queue = this.queues.get(sessionId)!;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0);
        try {
          const recorded = await this.writeBatch(batch);
          batch.forEach((b, i) => b.resolve(recorded[i]));
          const last = recorded[recorded.length - 1];
          this.cache.set({ session: { ...last.after.session }, leaf: last.after.leaf });
        } catch (err) {
          if (batch.length === 1) batch[0].reject(err);
          // One recording's failure must not fail the others: write them one by one.
          else for (const b of batch) await this.writeBatch([b]).then(([r]) => b.resolve(r), b.reject);
        }
      }
    } finally {
      this.queues.delete(sessionId);
    }
  }

  private async writeBatch(batch: QueuedRecording[]): Promise<RecordedExchange[]> {
    const asyncCommit = this.config.chat.recordAsyncCommit;
    const { tenantId, sessionId } = batch[0].exchange;
    const contended = (this.contendedUntil.get(sessionId) ?? 0) > Date.now();
    const writeAll = async (tx: ChatTx) => {
      const out: RecordedExchange[] = [];
      for (const b of batch) out.push(await this.write(tx, b.exchange, b.result));
      return out;
    };
    if (!contended) {
      // The freshest view this process has: its last recording of the session, else what prepare read.
      const snapshot = this.cache.get(tenantId, sessionId) ?? batch[0].exchange.snapshot;
      const fast = await this.transcripts.withoutLock(snapshot, writeAll, { asyncCommit });
      if (fast) return fast;
      // Another writer moved the session: skip the guarded attempt for a while.
      this.contendedUntil.set(sessionId, Date.now() + CONTENDED_MS);
      if (this.contendedUntil.size > 10_000) this.contendedUntil.clear();
    }
    return this.transcripts.withSession({ tenantId, sessionId, asyncCommit }, writeAll);
  }

  private async write(tx: ChatTx, exchange: PreparedExchange, result: ExchangeResult): Promise<RecordedExchange> {
    const { messages } = exchange;
    // The prompt this store prepended (or the same text sent by the client) is not part of the transcript.
    const skip = tx.session.systemPrompt && messages[0]?.role === 'system' && messages[0].content === tx.session.systemPrompt ? 1 : 0;
    let attach = tx.activeLeaf ? await tx.message(tx.activeLeaf.id) : null;
    // A failed reply gets no children: new messages go beside it (it is not counted as persisted either).
    if (attach?.status === 'failed') attach = attach.parentId ? await tx.message(attach.parentId) : null;
    const parentId = attach?.id ?? null;
    const fresh = newClientMessages(messages.slice(skip), attach?.replayCount ?? 0, attach?.messageJson ?? null);
    const callId = newCallId();
    await tx.insertCall({ ...result.call, id: callId, status: result.status === 'complete' ? 'completed' : result.status });
    // A reply cut by the client keeps its text; tool calls it never finished are dropped (nobody will answer them).
    const cut = result.status !== 'complete';
    const reply = assistantMessage(cut ? withoutToolCalls(result.reply) : result.reply);
    const appended = await tx.append(parentId, [
      ...fresh.map((message) => ({ message })),
      { message: reply, status: result.status, producedByCallId: callId, error: result.error ?? null },
    ]);
    const leaf = appended[appended.length - 1];
    tx.setActiveLeaf(leaf);
    return { sessionId: tx.session.id, callId, messages: appended, after: { session: tx.session, leaf } };
  }
}

const withoutToolCalls = (r: GeneratedReply): GeneratedReply => ({
  text: r.text,
  content_blocks: r.content_blocks.filter((b) => b.type !== 'tool_use'),
  tool_calls: [],
});
