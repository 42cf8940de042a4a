import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { decodePageCursor, encodePageCursor, keysetPage } from '@core/http/page-cursor';
import { newSessionId } from './chat-message';
import type { ChatSessionRow } from './chat-rows';
import { ChatSessionRepository } from './chat-session.repository';
import { CreateChatSessionDto, UpdateChatSessionDto } from './chat-session.dto';
import { canonicalVisibleId, toChatSessionSummary, toLineageResponse } from './chat-session-view.dto';
import { ChatMessageNotFoundError, ChatSessionNotFoundError } from './chat-sessions.errors';
import { ChatSnapshotCacheService } from './chat-snapshot-cache.service';
import { ChatTranscriptRepository } from './chat-transcript.repository';
import { latestLeaf } from './chat-tree';

/** Sessions: CRUD, the active-path and tree views, branch switching, lineage resolution. */
@Injectable()
export class ChatSessionsService {
  constructor(
    private readonly sessions: ChatSessionRepository,
    private readonly transcripts: ChatTranscriptRepository,
    private readonly config: AppConfig,
    private readonly cache: ChatSnapshotCacheService,
  ) {}

  async create(tenantId: string, dto: CreateChatSessionDto) {
    const id = newSessionId();
    const now = new Date();
    const row: ChatSessionRow = {
      id,
      tenantId,
      title: dto.title ?? '',
      systemPrompt: dto.system_prompt ?? '',
      userName: dto.user ?? '',
      activeLeafId: null,
      nextSequence: 0,
      messageCount: 0,
      providerCallCount: 0,
      lastModel: null,
      lastProvider: null,
      lastCostMicrosUsd: null,
      lastRequestId: null,
      parentSessionId: null,
      lineageRootId: id,
      lineageTipId: id,
      compressionSegmentCount: 0,
      continuationSessionId: null,
      preCompressionSnapshot: false,
      createdAt: now,
      updatedAt: now,
    };
    await this.transcripts.insertSession(row);
    return { ...toChatSessionSummary(row), messages: [], provider_calls: [] };
  }

  async list(tenantId: string, opts: { includeSnapshots: boolean; limit?: number; cursor?: string }) {
    const limit = opts.limit ?? this.config.chat.sessionsLimit;
    const rows = await this.sessions.list({ tenantId, includeSnapshots: opts.includeSnapshots, limit: limit + 1, before: decodeCursor(opts.cursor) });
    return keysetPage(rows, limit, toChatSessionSummary, encodeCursor);
  }

  private async require(tenantId: string, id: string): Promise<ChatSessionRow> {
    const row = await this.sessions.find({ tenantId, id });
    if (!row) throw new ChatSessionNotFoundError(id);
    return row;
  }

  /** The session with its active path (default) or every message (`tree`), and its provider calls. */
  async get(tenantId: string, id: string, view: 'active_path' | 'tree' = 'active_path') {
    const session = await this.require(tenantId, id);
    const [messages, calls] = await Promise.all([
      this.sessions.messagesView(id, view === 'tree' ? undefined : session.activeLeafId),
      this.sessions.callsView(id),
    ]);
    return { ...toChatSessionSummary(session), view, messages, provider_calls: calls };
  }

  async update(tenantId: string, id: string, dto: UpdateChatSessionDto) {
    const session = await this.transcripts.withSession({ tenantId, sessionId: id }, async (tx) => {
      if (dto.title !== undefined) tx.session.title = dto.title;
      if (dto.system_prompt !== undefined) tx.session.systemPrompt = dto.system_prompt;
      if (dto.user !== undefined) tx.session.userName = dto.user;
      tx.touch();
      return tx.session;
    });
    await this.cache.changed([id]);
    return toChatSessionSummary(session);
  }

  /**
   * Deleting the visible row of a lineage (its tip) deletes the whole conversation, snapshots included;
   * deleting a snapshot removes only that archived segment.
   */
  async delete(tenantId: string, id: string) {
    const session = await this.require(tenantId, id);
    const ids = session.preCompressionSnapshot ? [id] : (await this.sessions.lineage({ tenantId, rootId: session.lineageRootId })).map((r) => r.id);
    await this.sessions.deleteSessions(tenantId, ids);
    await this.cache.changed(ids);
    return { id, deleted: true, deleted_session_ids: ids };
  }

  /** docs/api.md §2: a snapshot resolves to its lineage's visible tip; anything else to itself. */
  async resolve(tenantId: string, id: string) {
    const session = await this.require(tenantId, id);
    const lineage = await this.sessions.lineage({ tenantId, rootId: session.lineageRootId });
    const canonical = canonicalVisibleId(session);
    return {
      requested_session_id: id,
      canonical_visible_session_id: canonical,
      reason: canonical === id ? 'self' : 'continuation',
      lineage: toLineageResponse(session, lineage),
    };
  }

  /** Switches branch: the active leaf becomes the deepest descendant on the most recent path under `messageId`. */
  async setActiveLeaf(tenantId: string, id: string, messageId: string) {
    await this.transcripts.withSession({ tenantId, sessionId: id }, async (tx) => {
      const target = await tx.message(messageId);
      if (!target) throw new ChatMessageNotFoundError(id, messageId);
      const leafId = latestLeaf(await tx.links(), messageId);
      const leaf = leafId === target.id ? target : await tx.message(leafId);
      tx.setActiveLeaf(leaf!);
    });
    return this.get(tenantId, id);
  }
}

const encodeCursor = (s: ChatSessionRow): string => encodePageCursor(s.updatedAt, s.id);

function decodeCursor(cursor: string | undefined): { updatedAt: Date; id: string } | undefined {
  const c = decodePageCursor(cursor);
  return c && { updatedAt: c.at, id: c.id };
}
