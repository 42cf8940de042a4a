import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@core/database/database.errors';
import { ConflictError, InvalidRequestError } from '@core/http/domain-error';
import type { ConsumedGuidance, GuidanceSource } from '@modules/agent-loop';
import type { GuidanceRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from '../turns/agent-chat-turns.service';
import { GuidanceRepository } from './guidance.repository';
import { AgentChatRepository } from '../agent-chat.repository';
import { AgentChatService, newChatId } from '../agent-chat.service';
import { AgentChatQueueFullError, checkContentSize, GuidanceConsumedError, GuidanceNotFoundError } from '../agent-chat.errors';
import { AppConfig } from '@core/config/app-config';

const receiptOf = (g: GuidanceRow) => ({
  guidance_id: g.guidance_id,
  turn_id: g.consumed_turn_id ?? undefined,
  run_id: g.consumed_run_id ?? undefined,
  model_call_index: g.model_call_index ?? undefined,
  message_id: g.message_id ?? undefined,
  consumed_at: g.consumed_at ? new Date(g.consumed_at).toISOString() : undefined,
});

/**
 * Guidance (docs/api.md §5 inject-user-message, docs/design.md §11.5): user messages for a running turn, stored as rows first and
 * announced second; the next model call of the session's running turn takes them, exactly once, in the transaction
 * that appends them to its conversation. Also the agent loop's GuidanceSource (GUIDANCE_SOURCE, provided on workers).
 */
@Injectable()
export class AgentChatGuidanceService implements GuidanceSource {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly guidanceRows: GuidanceRepository,
    private readonly chats: AgentChatService,
    private readonly turns: AgentChatTurnsService,
    private readonly config: AppConfig,
  ) {}

  async add(tenantId: string, sessionId: string, dto: { content: string; guidance_id?: string; metadata?: Record<string, unknown> }) {
    await this.chats.require(tenantId, sessionId);
    if (!dto.content?.trim()) throw new InvalidRequestError('guidance content must not be empty', { details: { field: 'content' } });
    const { maxQueuedItems, maxContentBytes } = this.config.agent.chat;
    checkContentSize(dto.content, maxContentBytes);
    const guidanceId = dto.guidance_id?.trim() || newChatId('msg').replace(/^msg_/, 'guid_');
    try {
      const inserted = await this.guidanceRows.insertGuidance(
        { session_id: sessionId, guidance_id: guidanceId, tenant_id: tenantId, content: dto.content, metadata: dto.metadata ?? {} },
        maxQueuedItems,
      );
      if (!inserted) throw new AgentChatQueueFullError('pending guidance items', maxQueuedItems);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`guidance ${guidanceId} already exists in this session`, { details: { guidance_id: guidanceId } });
      throw err;
    }
    this.turns.announce({ session_id: sessionId, tenant_id: tenantId }, 'guidance');
    return { session_id: sessionId, guidance_id: guidanceId, accepted: true };
  }

  /** Pending items (docs/api.md §5); `all` adds consumed ones with their receipts. */
  async list(tenantId: string, sessionId: string, all: boolean) {
    await this.chats.require(tenantId, sessionId);
    const rows = await this.guidanceRows.guidance(sessionId, all ? undefined : 'pending');
    return {
      session_id: sessionId,
      items: rows.map((g) => ({
        guidance_id: g.guidance_id,
        content: g.content,
        status: g.status,
        timestamp: new Date(g.created_at).getTime() / 1000,
        metadata: Object.keys(g.metadata).length ? g.metadata : undefined,
        ...(g.status === 'consumed' ? { receipt: receiptOf(g) } : {}),
      })),
    };
  }

  async update(tenantId: string, sessionId: string, guidanceId: string, content: string) {
    await this.chats.require(tenantId, sessionId);
    if (!content?.trim()) throw new InvalidRequestError('guidance content must not be empty', { details: { field: 'content' } });
    checkContentSize(content, this.config.agent.chat.maxContentBytes);
    if (!(await this.guidanceRows.changePendingGuidance(sessionId, guidanceId, content))) await this.refuse(sessionId, guidanceId);
    return { updated: true };
  }

  async remove(tenantId: string, sessionId: string, guidanceId: string) {
    await this.chats.require(tenantId, sessionId);
    if (!(await this.guidanceRows.changePendingGuidance(sessionId, guidanceId, null))) await this.refuse(sessionId, guidanceId);
    return { deleted: true };
  }

  private async refuse(sessionId: string, guidanceId: string): Promise<never> {
    const g = await this.guidanceRows.findGuidance(sessionId, guidanceId);
    if (g?.status === 'consumed') throw new GuidanceConsumedError(guidanceId, receiptOf(g));
    throw new GuidanceNotFoundError(sessionId, guidanceId);
  }

  // ---- GuidanceSource (workers) ----------------------------------------------------------------------------

  pendingFor(tenantId: string, runId: string): Promise<boolean> {
    return this.guidanceRows.guidancePendingForRun(tenantId, runId);
  }

  async consumeIn(manager: EntityManager, at: { tenantId: string; runId: string; modelCallIndex: number }): Promise<ConsumedGuidance[]> {
    const turn = await this.guidanceRows.activeTurnOfRun(manager, at.tenantId, at.runId);
    if (!turn) return [];
    const taken = await this.guidanceRows.consumeGuidanceIn(manager, turn, at.modelCallIndex);
    return taken.map((g) => ({ guidance_id: g.guidance_id, content: g.content, metadata: g.metadata, message_id: g.message_id, turn_id: turn.id }));
  }
}
