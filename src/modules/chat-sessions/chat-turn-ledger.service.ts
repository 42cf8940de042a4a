import { newLeaseToken } from '@core/lease';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { InvalidRequestError } from '@core/http/domain-error';
import {
  assistantMessage,
  charsOf,
  ChatMessageJson,
  extendAssistantMessage,
  GeneratedReply,
  isReplayable,
  MessageStatus,
  newCallId,
  openToolCalls,
  syntheticToolError,
  withSystemPrompt,
} from './chat-message';
import type { ChatMessageRow, ChatProviderCallRow } from './chat-rows';
import { ChatBranchBusyError, ChatIdempotencyMismatchError, ChatMessageNotFoundError, ChatNotContinuableError } from './chat-sessions.errors';
import { ChatTranscriptRepository } from './chat-transcript.repository';
import type { ChatTx } from './chat-tx';
import type { NewProviderCall } from './chat-write-types';

export type TurnKind = 'send' | 'regenerate' | 'edit' | 'continue';

/** What a begun turn needs to generate, and the rows it created. */
export interface BegunTurn {
  kind: TurnKind;
  tenantId: string;
  sessionId: string;
  /** The user message this turn created (send, edit). */
  userMessage: ChatMessageRow | null;
  /** The assistant message being generated (a new placeholder, or the message being continued). */
  assistant: ChatMessageRow;
  /** The in-flight row, also the LiveStreamBuffer stream id (the assistant message id; `<id>~<n>` for a continuation). */
  generationId: string;
  /** The generation's lease token (core/lease): the holder heartbeats and finishes with it. */
  leaseToken: string;
  /** Messages to send upstream: the replayable path, session system prompt applied. */
  replay: ChatMessageJson[];
  /** `continue`: the partial message before this turn. */
  previous: { message: ChatMessageJson; status: MessageStatus } | null;
  /** The last model/provider the session used (auto-compaction uses them when the turn names none). */
  lastModel: string | null;
  lastProvider: string | null;
}

/** An idempotent replay of an earlier send (same client_request_id). */
export interface ReplayedTurn {
  replayed: true;
  sessionId: string;
  userMessage: ChatMessageRow;
  assistant: ChatMessageRow | null;
}

/** How a generation ended. */
export interface TurnOutcome {
  status: 'complete' | 'stopped' | 'incomplete' | 'failed';
  reply: GeneratedReply;
  call: Omit<NewProviderCall, 'id' | 'status'> | null;
  error?: Record<string, unknown>;
  /** `continue`: the model answered anew rather than continuing the partial (docs/takeover.md): the reply replaces it. */
  restarted?: boolean;
}

export type FinishableTurn = Pick<BegunTurn, 'tenantId' | 'sessionId' | 'generationId' | 'kind' | 'previous'> & { assistant: { id: string } };

export interface FinishedTurn {
  /** The row was gone: someone else (a stop that took over) already finalised the message. */
  skipped: boolean;
  assistant: ChatMessageRow;
  call: ChatProviderCallRow | null;
  toolResults: ChatMessageRow[];
}

const EMPTY_REPLY: GeneratedReply = { text: '', content_blocks: [], tool_calls: [] };
const ROOT_KEY = '<root>';

/**
 * The database side of server-side turns (docs/api.md §3): creating the user message and the assistant
 * placeholder with the branch lock in one transaction, and finalising the reply, its provider call and
 * any synthetic tool results in another. Nothing here talks to a provider.
 */
@Injectable()
export class ChatTurnLedgerService {
  constructor(
    private readonly transcripts: ChatTranscriptRepository,
    private readonly config: AppConfig,
  ) {}

  private get staleAfterMs(): number {
    return this.config.chat.generation.staleAfterMs;
  }

  async beginSend(
    tenantId: string,
    sessionId: string,
    input: { content: unknown; parentId?: string; clientRequestId?: string; owner: string },
  ): Promise<BegunTurn | ReplayedTurn> {
    const content = validContent(input.content);
    return this.transcripts.withSession({ tenantId, sessionId }, async (tx) => {
      if (input.clientRequestId) {
        const earlier = await tx.byClientRequestId(input.clientRequestId);
        if (earlier) {
          if (JSON.stringify(earlier.messageJson.content) !== JSON.stringify(content)) throw new ChatIdempotencyMismatchError(input.clientRequestId);
          return { replayed: true, sessionId, userMessage: earlier, assistant: await tx.firstChild(earlier.id) } satisfies ReplayedTurn;
        }
      }
      let parent: ChatMessageRow | null = null;
      if (input.parentId) {
        parent = await tx.message(input.parentId);
        if (!parent) throw new ChatMessageNotFoundError(sessionId, input.parentId);
      } else if (tx.activeLeaf) {
        parent = await tx.message(tx.activeLeaf.id);
      }
      // A failed reply gets no children: the next message goes beside it.
      if (parent?.status === 'failed') parent = parent.parentId ? await tx.message(parent.parentId) : null;
      await this.claimBranch(tx, parent?.id ?? null);
      const [user] = await tx.append(parent?.id ?? null, [{ message: { role: 'user', content }, clientRequestId: input.clientRequestId ?? null }]);
      return this.startGeneration(tx, { kind: 'send', tenantId, owner: input.owner, parent: user, leafKey: parent?.id ?? ROOT_KEY, userMessage: user });
    });
  }

  async beginRegenerate(tenantId: string, sessionId: string, input: { messageId: string; owner: string }): Promise<BegunTurn> {
    return this.transcripts.withSession({ tenantId, sessionId }, async (tx) => {
      const target = await tx.message(input.messageId);
      if (!target) throw new ChatMessageNotFoundError(sessionId, input.messageId);
      // An assistant message gets a new sibling; any other message a (new) reply under it.
      const parent = target.role === 'assistant' ? (target.parentId ? await tx.message(target.parentId) : null) : target;
      await this.claimBranch(tx, parent?.id ?? null);
      return this.startGeneration(tx, { kind: 'regenerate', tenantId, owner: input.owner, parent, leafKey: parent?.id ?? ROOT_KEY, userMessage: null });
    });
  }

  /** A new user sibling with the edited content (the original and its replies stay); a reply unless `regenerate` is false. */
  async beginEdit(
    tenantId: string,
    sessionId: string,
    input: { messageId: string; content: unknown; regenerate: boolean; owner: string },
  ): Promise<BegunTurn | { edited: ChatMessageRow }> {
    const content = validContent(input.content);
    return this.transcripts.withSession({ tenantId, sessionId }, async (tx) => {
      const target = await tx.message(input.messageId);
      if (!target) throw new ChatMessageNotFoundError(sessionId, input.messageId);
      if (target.role !== 'user') throw new InvalidRequestError(`only user messages can be edited; ${target.id} is a ${target.role} message`);
      const [edited] = await tx.append(target.parentId, [{ message: { ...target.messageJson, content } }]);
      if (!input.regenerate) {
        tx.setActiveLeaf(edited);
        return { edited };
      }
      return this.startGeneration(tx, { kind: 'edit', tenantId, owner: input.owner, parent: edited, leafKey: edited.id, userMessage: edited });
    });
  }

  /** Extends an incomplete/stopped assistant message in place. */
  async beginContinue(tenantId: string, sessionId: string, input: { messageId: string; owner: string }): Promise<BegunTurn> {
    return this.transcripts.withSession({ tenantId, sessionId }, async (tx) => {
      const found = await tx.message(input.messageId);
      if (!found) throw new ChatMessageNotFoundError(sessionId, input.messageId);
      if (found.role !== 'assistant') throw new ChatNotContinuableError(found.id, `it is a ${found.role} message`);
      await this.claimBranch(tx, found.id);
      const target = (await tx.message(found.id))!;
      if (target.status !== 'incomplete' && target.status !== 'stopped') throw new ChatNotContinuableError(target.id, `its status is ${target.status}`);
      if ((target.messageJson.tool_calls ?? []).length > 0) throw new ChatNotContinuableError(target.id, 'it ended in tool calls');
      if (await tx.hasChildren(target.id)) throw new ChatNotContinuableError(target.id, 'the conversation already continues after it');
      const path = await tx.path(target.id);
      await tx.updateMessage(target.id, { status: 'in_progress' });
      const generationId = `${target.id}~${Date.now().toString(36)}`;
      const leaseToken = newLeaseToken();
      await tx.insertGeneration({
        id: generationId,
        leafKey: target.id,
        messageId: target.id,
        kind: 'continue',
        previousStatus: target.status,
        owner: input.owner,
        token: leaseToken,
        leaseMs: this.staleAfterMs,
      });
      tx.setActiveLeaf({ id: target.id, replayCount: target.replayCount, replayChars: target.replayChars, status: 'in_progress' });
      return {
        kind: 'continue',
        tenantId,
        sessionId,
        userMessage: null,
        assistant: { ...target, status: 'in_progress' },
        generationId,
        leaseToken,
        replay: replayOf(path, tx.session.systemPrompt),
        previous: { message: target.messageJson, status: target.status },
        lastModel: tx.session.lastModel,
        lastProvider: tx.session.lastProvider,
      };
    });
  }

  /**
   * Finalises a generation: its provider call, the reply (failed ones keep the error and leave replay),
   * and a synthetic tool_error result for every tool call a cut-short reply left open. `leaseToken` undefined
   * finalises whoever held it (a stop taking over from a dead or silent owner).
   */
  async finish(turn: FinishableTurn, outcome: TurnOutcome, leaseToken?: string): Promise<FinishedTurn> {
    return this.transcripts.withSession({ tenantId: turn.tenantId, sessionId: turn.sessionId, allowSnapshot: true }, async (tx) => {
      const current = await tx.message(turn.assistant.id);
      if (!current) throw new ChatMessageNotFoundError(turn.sessionId, turn.assistant.id);
      const owned = await tx.deleteGeneration(turn.generationId, leaseToken);
      if (!owned && current.status !== 'in_progress') return { skipped: true, assistant: current, call: null, toolResults: [] };
      return this.finalize(tx, current, turn, outcome);
    });
  }

  private async finalize(tx: ChatTx, current: ChatMessageRow, turn: Pick<BegunTurn, 'kind' | 'previous'>, outcome: TurnOutcome): Promise<FinishedTurn> {
    let call: ChatProviderCallRow | null = null;
    if (outcome.call) {
      const id = newCallId();
      const row = { ...outcome.call, id, status: outcome.status === 'complete' ? 'completed' : outcome.status, createdAt: new Date() };
      await tx.insertCall(row);
      call = { ...row, sessionId: tx.session.id, totalTokens: row.promptTokens + row.completionTokens };
    }
    const continuing = turn.kind === 'continue' && turn.previous;
    let status: MessageStatus = outcome.status;
    let message: ChatMessageJson;
    let replayCount = current.replayCount;
    if (outcome.status === 'failed') {
      // A failed continuation keeps the partial text it started from; a failed reply keeps what it streamed (for display).
      message = continuing ? turn.previous!.message : assistantMessage(outcome.reply ?? EMPTY_REPLY, { repairArguments: true });
      status = continuing ? turn.previous!.status : 'failed';
      if (!continuing) replayCount = current.replayCount - 1;
    } else {
      const cut = outcome.status !== 'complete';
      message =
        continuing && !outcome.restarted
          ? extendAssistantMessage(turn.previous!.message, outcome.reply)
          : assistantMessage(outcome.reply, { repairArguments: cut });
    }
    const replayChars = current.replayChars - charsOf(current.messageJson) + (isReplayable(status) ? charsOf(message) : 0);
    const updatedAt = await tx.updateMessage(current.id, {
      message,
      status,
      replayCount,
      replayChars,
      producedByCallId: call?.id ?? current.producedByCallId,
      error: outcome.status === 'failed' ? (outcome.error ?? { type: 'gateway_error', message: 'generation failed' }) : null,
    });
    const assistant: ChatMessageRow = {
      ...current,
      messageJson: message,
      status,
      replayCount,
      replayChars,
      producedByCallId: call?.id ?? current.producedByCallId,
      updatedAt,
    };
    if (outcome.status === 'failed') assistant.errorJson = outcome.error ?? null;
    const toolResults = await this.closeOpenToolCalls(
      tx,
      assistant,
      outcome.status === 'stopped' ? 'the generation was stopped' : 'the generation ended before it ran',
    );
    return { skipped: false, assistant, call, toolResults };
  }

  /** Appends a tool_error result for each tool call of a cut-short reply, so the transcript replays. */
  private async closeOpenToolCalls(tx: ChatTx, assistant: ChatMessageRow, reason: string): Promise<ChatMessageRow[]> {
    if (assistant.status === 'complete' || assistant.status === 'failed') return [];
    const open = openToolCalls(assistant.messageJson, []);
    if (open.length === 0) return [];
    const results = await tx.append(
      assistant.id,
      open.map((id) => ({ message: syntheticToolError(id, reason) })),
    );
    if (tx.session.activeLeafId === assistant.id) tx.setActiveLeaf(results[results.length - 1]);
    return results;
  }

  /**
   * The branch lock (docs/api.md §3 concurrency): one generation per leaf. A row whose owner stopped
   * heartbeating is dead: its message becomes `incomplete` and the leaf is free.
   */
  private async claimBranch(tx: ChatTx, parentId: string | null): Promise<void> {
    const key = parentId ?? ROOT_KEY;
    for (const g of await tx.generations()) {
      const hit = g.leafKey === key || g.messageId === parentId || g.leafKey === '*';
      if (!hit) continue;
      if (!g.stale) throw new ChatBranchBusyError(tx.session.id, parentId ?? '', g.messageId);
      await this.reapStale(tx, g.id, g.messageId, g.kind, g.previousStatus as MessageStatus | null);
    }
  }

  /** Finalises a dead owner's generation as `incomplete` (continue: back to its previous status). */
  private async reapStale(tx: ChatTx, id: string, messageId: string | null, kind: string, previousStatus: MessageStatus | null): Promise<void> {
    await tx.deleteGeneration(id);
    if (!messageId) return;
    const m = await tx.message(messageId);
    if (!m || m.status !== 'in_progress') return;
    const status: MessageStatus = kind === 'continue' && previousStatus ? previousStatus : 'incomplete';
    await tx.updateMessage(m.id, { status });
    await this.closeOpenToolCalls(tx, { ...m, status }, 'the generation ended before it ran');
  }

  private async startGeneration(
    tx: ChatTx,
    p: { kind: TurnKind; tenantId: string; owner: string; parent: ChatMessageRow | null; leafKey: string; userMessage: ChatMessageRow | null },
  ): Promise<BegunTurn> {
    const [assistant] = await tx.append(p.parent?.id ?? null, [{ message: { role: 'assistant', content: '' }, status: 'in_progress' }]);
    const leaseToken = newLeaseToken();
    await tx.insertGeneration({
      id: assistant.id,
      leafKey: p.leafKey,
      messageId: assistant.id,
      kind: p.kind,
      previousStatus: null,
      owner: p.owner,
      token: leaseToken,
      leaseMs: this.staleAfterMs,
    });
    tx.setActiveLeaf(assistant);
    const path = p.parent ? await tx.path(p.parent.id) : [];
    return {
      kind: p.kind,
      tenantId: p.tenantId,
      sessionId: tx.session.id,
      userMessage: p.userMessage,
      assistant,
      generationId: assistant.id,
      leaseToken,
      replay: replayOf(path, tx.session.systemPrompt),
      previous: null,
      lastModel: tx.session.lastModel,
      lastProvider: tx.session.lastProvider,
    };
  }
}

/** The path as sent upstream: failed and in-progress messages left out, session system prompt first. */
export function replayOf(path: ChatMessageRow[], systemPrompt: string): ChatMessageJson[] {
  return withSystemPrompt(
    path.filter((m) => isReplayable(m.status) && m.status !== 'in_progress').map((m) => m.messageJson),
    systemPrompt,
  );
}

function validContent(content: unknown): unknown {
  if (typeof content === 'string') {
    if (content.trim() === '') throw new InvalidRequestError('content must not be empty');
    return content;
  }
  if (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every((p) => typeof p === 'object' && p !== null && typeof (p as { type?: unknown }).type === 'string')
  ) {
    return content;
  }
  throw new InvalidRequestError('content must be a non-empty string or an array of content parts');
}
