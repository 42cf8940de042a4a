import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { assistantMessage, canonicalClientMessage, ChatMessageJson, GeneratedReply, newCallId, newClientMessages, withSystemPrompt } from './chat-message';
import type { ChatMessageEntity } from './chat-message.entity';
import { ChatSessionRepository } from './chat-session.repository';
import { ChatSnapshotCacheService, SessionSnapshot } from './chat-snapshot-cache.service';
import { ChatBranchBusyError, ChatSessionNotFoundError, ChatSessionSupersededError } from './chat-sessions.errors';
import { ChatTranscriptRepository, ChatTx, NewProviderCall } from './chat-transcript.repository';

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
  messages: ChatMessageEntity[];
  /** The session as this recording left it. */
  after: SessionSnapshot;
}

/**
 * RecordChatExchange (seed 000 "Replay"): after a `/v1/chat/completions` call that names a session,
 * append only the messages the client added since the last exchange, then the reply with
 * `produced_by_call_id`, and the provider call — one transaction, under the session row lock.
 */
@Injectable()
export class ChatExchangeRecorderService {
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
   * Written against the snapshot of `prepare` in one guarded statement when the session did not move
   * during the upstream call (the usual case); otherwise under the session lock.
   */
  async record(exchange: PreparedExchange, result: ExchangeResult): Promise<RecordedExchange> {
    const asyncCommit = this.config.chat.recordAsyncCommit;
    const write = (tx: ChatTx) => this.write(tx, exchange, result);
    const recorded =
      (await this.transcripts.withoutLock(exchange.snapshot, write, { asyncCommit })) ??
      (await this.transcripts.withSession({ tenantId: exchange.tenantId, sessionId: exchange.sessionId, asyncCommit }, write));
    this.cache.set({ session: { ...recorded.after.session }, leaf: recorded.after.leaf });
    return recorded;
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

const withoutToolCalls = (r: GeneratedReply): GeneratedReply => ({ text: r.text, content_blocks: r.content_blocks.filter((b) => b.type !== 'tool_use'), tool_calls: [] });
