import { newLeaseToken } from '@core/lease';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ConflictError } from '@core/http/domain-error';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { ChatMessageJson, MessageStatus, newCallId, newSessionId } from './chat-message';
import type { ChatMessageRow, ChatSessionRow } from './chat-rows';
import { ChatBranchBusyError } from './chat-sessions.errors';
import { ChatSnapshotCacheService } from './chat-snapshot-cache.service';
import { ChatTranscriptRepository } from './chat-transcript.repository';
import type { NewProviderCall } from './chat-write-types';

/** A compaction that holds the session-wide lock (leaf `*`) while its summary is generated. */
export interface ClaimedCompaction {
  tenantId: string;
  sessionId: string;
  generationId: string;
  /** Replayable messages of the active path, oldest first. */
  head: ChatMessageRow[];
  /** The last messages, copied as they are into the continuation. */
  tail: ChatMessageRow[];
  systemPrompt: string;
  lastModel: string | null;
  lastProvider: string | null;
}

export interface CompactionSummary {
  text: string;
  call: Omit<NewProviderCall, 'id' | 'status'> | null;
}

export const SUMMARY_PREFIX = 'Summary of the earlier conversation (compacted by Hecate):\n\n';

/**
 * Compression lineage (docs/api.md §2): the compacted row becomes a read-only `pre_compression_snapshot`;
 * a continuation session gets the summary plus the last messages; both are linked by parent /
 * continuation ids and share `lineage_root_id` and `lineage_tip_id`.
 */
@Injectable()
export class ChatLineageService {
  constructor(
    private readonly transcripts: ChatTranscriptRepository,
    private readonly config: AppConfig,
    private readonly cache: ChatSnapshotCacheService,
  ) {}

  /** Takes the session-wide lock (409 branch_busy while anything generates) and splits the active path. */
  async claim(tenantId: string, sessionId: string, input: { keepLastMessages?: number; owner: string }): Promise<ClaimedCompaction> {
    const keep = input.keepLastMessages ?? this.config.chat.compaction.keepLastMessages;
    return this.transcripts.withSession({ tenantId, sessionId }, async (tx) => {
      for (const g of await tx.generations()) {
        if (!g.stale) throw new ChatBranchBusyError(sessionId, g.leafKey === '*' ? '*' : g.leafKey, g.messageId);
      }
      const path = (await tx.path(tx.session.activeLeafId)).filter((m) => m.status !== 'failed' && m.status !== 'in_progress');
      let cut = Math.max(0, path.length - keep);
      // Never separate tool results from the assistant message that called them.
      while (cut > 0 && path[cut]?.role === 'tool') cut--;
      const head = path.slice(0, cut);
      if (head.length === 0) {
        throw new ConflictError(`chat session ${sessionId} has nothing to compact: its active path has ${path.length} messages and the last ${keep} are kept`);
      }
      const generationId = `compact_${randomUUID().replace(/-/g, '')}`;
      await tx.insertGeneration({
        id: generationId,
        leafKey: '*',
        messageId: null,
        kind: 'compact',
        previousStatus: null,
        owner: input.owner,
        token: newLeaseToken(),
        leaseMs: this.config.chat.generation.staleAfterMs,
      });
      return {
        tenantId,
        sessionId,
        generationId,
        head,
        tail: path.slice(cut),
        systemPrompt: tx.session.systemPrompt,
        lastModel: tx.session.lastModel,
        lastProvider: tx.session.lastProvider,
      };
    });
  }

  async release(claim: ClaimedCompaction): Promise<void> {
    await this.transcripts
      .withSession({ tenantId: claim.tenantId, sessionId: claim.sessionId, allowSnapshot: true }, (tx) => tx.deleteGeneration(claim.generationId))
      .catch(ignoreFailure('releasing a compaction claim', 'once its generation lease lapses the row counts as stale, as for an owner that died'));
  }

  /**
   * Creates the continuation and turns the source into a snapshot, in one transaction under the source
   * row lock (a writer that lost the race then sees `chat_session.superseded`).
   */
  async commit(claim: ClaimedCompaction, summary: CompactionSummary): Promise<{ snapshot: ChatSessionRow; continuation: ChatSessionRow }> {
    const done = await this.commitLocked(claim, summary);
    await this.cache.changed([claim.sessionId]);
    return done;
  }

  private commitLocked(claim: ClaimedCompaction, summary: CompactionSummary): Promise<{ snapshot: ChatSessionRow; continuation: ChatSessionRow }> {
    return this.transcripts.withSession({ tenantId: claim.tenantId, sessionId: claim.sessionId }, async (tx) => {
      if (!(await tx.deleteGeneration(claim.generationId))) {
        throw new ConflictError(`the compaction of chat session ${claim.sessionId} was taken over; retry`);
      }
      const source = tx.session;
      const now = new Date();
      const row: ChatSessionRow = {
        id: newSessionId(),
        tenantId: source.tenantId,
        title: source.title,
        systemPrompt: source.systemPrompt,
        userName: source.userName,
        activeLeafId: null,
        nextSequence: 0,
        messageCount: 0,
        providerCallCount: 0,
        lastModel: source.lastModel,
        lastProvider: source.lastProvider,
        lastCostMicrosUsd: source.lastCostMicrosUsd,
        lastRequestId: source.lastRequestId,
        parentSessionId: source.id,
        lineageRootId: source.lineageRootId,
        lineageTipId: '',
        compressionSegmentCount: source.compressionSegmentCount + 1,
        continuationSessionId: null,
        preCompressionSnapshot: false,
        createdAt: now,
        updatedAt: now,
      };
      row.lineageTipId = row.id;
      const next = await tx.createSession(row);
      let callId: string | null = null;
      if (summary.call) {
        callId = newCallId();
        await next.insertCall({ ...summary.call, id: callId, status: 'completed' });
      }
      const summaryMessage: ChatMessageJson = { role: 'user', content: `${SUMMARY_PREFIX}${summary.text}` };
      const copied = await next.append(null, [
        { message: summaryMessage, kind: 'compaction_summary', producedByCallId: callId },
        ...claim.tail.map((m) => ({ message: m.messageJson, status: m.status as MessageStatus, kind: m.kind })),
      ]);
      next.setActiveLeaf(copied[copied.length - 1]);
      source.preCompressionSnapshot = true;
      source.continuationSessionId = row.id;
      tx.touch();
      await tx.setLineageTip(source.lineageRootId, row.id);
      return { snapshot: source, continuation: next.session };
    });
  }
}
