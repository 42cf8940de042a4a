import { Injectable } from '@nestjs/common';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';
import { asDomainError, toErrorEnvelope } from '@core/http/error-envelope';
import { rootLogger } from '@core/logging/logger';
import type { QueueItemRow, RuntimeKind } from '../agent-chat-rows';
import { AgentChatTurnsService } from '../turns/agent-chat-turns.service';
import { QueueRepository } from './queue.repository';
import { AgentChatRepository } from '../agent-chat.repository';
import { AgentChatService, newChatId, type StartedTurn } from '../agent-chat.service';
import type { PostAgentChatMessageDto } from '../agent-chat.dto';
import { AgentChatErrorType, AgentChatQueueFullError, checkContentSize } from '../agent-chat.errors';
import { AppConfig } from '@core/config/app-config';
import { ignoreFailure } from '@core/logging/ignore-failure';

/** A queued prompt's failure to start that is not a DomainError (kept on the item as `{type, message}`). */
const internalFailure = (message: string): DomainError => new DomainError('internal_error', 500, message);

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : undefined);

export const toQueueItemView = (q: QueueItemRow) => ({
  id: q.id,
  session_id: q.session_id,
  content: q.content,
  runtime_kind: q.runtime_kind,
  provider: q.provider || undefined,
  model: q.model || undefined,
  workspace: q.workspace || undefined,
  status: q.status,
  turn_id: q.turn_id ?? undefined,
  error: q.error ?? undefined,
  created_at: iso(q.created_at),
  updated_at: iso(q.updated_at),
});

const BUSY_TYPES = new Set<string>([AgentChatErrorType.SessionBusy, AgentChatErrorType.SessionStopping]);

/**
 * The durable queued-next FIFO of a session (docs/api.md §1 "Queued next", made server-side; `on_busy: enqueue`): prompts
 * with the runtime / model / workspace snapshot of the moment they were queued, editable and removable until they start,
 * started one at a time when the session's active turn ends — by the worker's recovery pass (on the session's doorbell,
 * and every reconcile interval), or at once by the api when the session is already idle.
 */
@Injectable()
export class AgentChatQueueService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly queueRows: QueueRepository,
    private readonly chats: AgentChatService,
    private readonly turns: AgentChatTurnsService,
    private readonly config: AppConfig,
  ) {}

  /** `id`: the item's id when the caller derives it (a schedule's fire): enqueued once however often it is asked. */
  async enqueue(
    p: Principal,
    sessionId: string,
    dto: PostAgentChatMessageDto,
    id = newChatId('msg').replace(/^msg_/, 'queued_'),
  ): Promise<ReturnType<typeof toQueueItemView>> {
    const session = await this.chats.require(p.tenantId, sessionId);
    if (!dto.content.trim()) throw new InvalidRequestError('content must not be empty', { details: { field: 'content' } });
    const { maxQueuedItems, maxContentBytes } = this.config.agent.chat;
    checkContentSize(dto.content, maxContentBytes);
    const item = await this.queueRows.insertQueueItem(
      {
        id,
        session_id: sessionId,
        tenant_id: p.tenantId,
        content: dto.content,
        runtime_kind: (dto.runtime_kind ?? (session.runtime_kind === 'agent' ? 'agent' : session.runtime_kind)) as RuntimeKind,
        provider: dto.provider ?? session.provider,
        model: dto.model ?? session.model,
        workspace: dto.workspace ?? session.workspace,
        system_prompt: dto.system_prompt ?? '',
        host_paths: p.kind !== 'api_key',
      },
      maxQueuedItems,
    );
    if (!item) throw new AgentChatQueueFullError('queued items', maxQueuedItems);
    this.turns.announce({ session_id: sessionId, tenant_id: p.tenantId }, 'queued_next');
    // The turn may have ended while this was being queued: nothing else would start it before the next pass.
    void this.drain(sessionId).catch(ignoreFailure('queued-next drain', 'the recovery pass drains idle sessions that still have waiting items'));
    return toQueueItemView((await this.queueRows.findQueueItem(sessionId, item.id)) ?? item);
  }

  /**
   * `POST …/messages` with its `on_busy`: `reject` (the API contract's 409), `interrupt` (docs/api.md §5 re-entrancy: the running turn
   * is stopped and settled, then this one runs), `enqueue` (queued-next: answered with the waiting item).
   */
  async startOrQueue(
    p: Principal,
    origin: RequestOrigin,
    sessionId: string,
    dto: PostAgentChatMessageDto,
  ): Promise<StartedTurn | { queued: ReturnType<typeof toQueueItemView> }> {
    try {
      return await this.chats.start(p, origin, sessionId, dto);
    } catch (err) {
      if (!(err instanceof DomainError) || !BUSY_TYPES.has(err.type) || !dto.on_busy || dto.on_busy === 'reject') throw err;
      if (dto.on_busy === 'enqueue') return { queued: await this.enqueue(p, sessionId, dto) };
      await this.chats.stopAndSettle(sessionId, origin);
      return this.chats.start(p, origin, sessionId, dto);
    }
  }

  async list(tenantId: string, sessionId: string) {
    await this.chats.require(tenantId, sessionId);
    return (await this.queueRows.queueItems(sessionId)).map(toQueueItemView);
  }

  /** One item whatever its status (the turn it started, or why it failed), or null. */
  async item(tenantId: string, sessionId: string, itemId: string): Promise<ReturnType<typeof toQueueItemView> | null> {
    const row = await this.queueRows.findQueueItem(sessionId, itemId);
    return row && row.tenant_id === tenantId ? toQueueItemView(row) : null;
  }

  async update(tenantId: string, sessionId: string, itemId: string, dto: { content?: string; runtime_kind?: string; provider?: string; model?: string }) {
    await this.chats.require(tenantId, sessionId);
    if (dto.content !== undefined && !dto.content.trim()) throw new InvalidRequestError('content must not be empty', { details: { field: 'content' } });
    checkContentSize(dto.content, this.config.agent.chat.maxContentBytes);
    const set = Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined));
    const r = await this.queueRows.changeQueuedItem(sessionId, itemId, set);
    if (r === false) await this.refuse(sessionId, itemId);
    return toQueueItemView(r as QueueItemRow);
  }

  async remove(tenantId: string, sessionId: string, itemId: string) {
    await this.chats.require(tenantId, sessionId);
    if ((await this.queueRows.changeQueuedItem(sessionId, itemId, null)) === false) await this.refuse(sessionId, itemId);
    return { id: itemId, deleted: true };
  }

  private async refuse(sessionId: string, itemId: string): Promise<never> {
    const item = await this.queueRows.findQueueItem(sessionId, itemId);
    if (!item) throw new NotFoundError(`queued item ${itemId} not found in agent chat session ${sessionId}`);
    throw new ConflictError(`queued item ${itemId} is ${item.status}; only waiting items can change`, {
      details: { status: item.status, turn_id: item.turn_id },
    });
  }

  /**
   * Starts the session's next waiting item if the session is idle (one drainer wins each item). An item the server
   * refuses (a model gone, a workspace removed…) is marked failed with the error and the next one is tried.
   */
  async drain(sessionId: string): Promise<StartedTurn | null> {
    for (;;) {
      const item = await this.queueRows.claimQueueItem(sessionId);
      if (!item) return null;
      const principal: Principal = { kind: item.host_paths ? 'operator' : 'api_key', tenantId: item.tenant_id, scopes: [] };
      const origin: RequestOrigin = { requestId: `queue_${item.id}` };
      try {
        const started = await this.chats.start(principal, origin, sessionId, {
          content: item.content,
          runtime_kind: item.runtime_kind,
          provider: item.provider || undefined,
          model: item.model || undefined,
          workspace: item.workspace || undefined,
          system_prompt: item.system_prompt || undefined,
        });
        await this.queueRows.settleQueueItem(item.id, { status: 'started', turn_id: started.turn.id });
        return started;
      } catch (err) {
        if (err instanceof DomainError && BUSY_TYPES.has(err.type)) {
          await this.queueRows.settleQueueItem(item.id, { status: 'queued' });
          return null;
        }
        const error = toErrorEnvelope(asDomainError(err, internalFailure), 'brief');
        rootLogger().warn({ session_id: sessionId, item_id: item.id, err: error.message }, 'queued agent chat prompt could not start');
        await this.queueRows.settleQueueItem(item.id, { status: 'failed', error });
      }
    }
  }
}
