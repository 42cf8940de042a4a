import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { NOW } from '@core/database/sql';
import { InvalidRequestError } from '@core/http/domain-error';
import { isActiveTurn, type MessageRow, type SessionRow, type TurnRow } from './agent-chat-rows';
import { sessionDoorbell } from './agent-chat-signals';
import { ExternalSessionsService } from './external/external-sessions.service';
import { AgentChatTurnsService } from './turns/agent-chat-turns.service';
import { toSessionSummary, toSessionView, type SessionView } from './agent-chat-view';
import { GuidanceRepository } from './guidance/guidance.repository';
import { AgentChatRepository } from './agent-chat.repository';
import type { CreateAgentChatSessionDto } from './agent-chat.dto';
import { AgentChatSessionNotFoundError, SessionNotRunningError, SessionStoppingError, checkContentSize } from './agent-chat.errors';
import { AgentChatSessionFactory } from './agent-chat-session-factory';
import { AgentChatTurnStarter, type StartedTurn } from './turns/agent-chat-turn-starter';
import { busyError } from './turns/agent-chat-turn-checks';

export { newChatId } from './agent-chat-inputs';
export type { StartedTurn } from './turns/agent-chat-turn-starter';

/**
 * Agent Chat sessions on the api side (docs/api.md §4, docs/design.md §11.2): create (AgentChatSessionFactory), post a
 * message (AgentChatTurnStarter: validate, persist the user message and the turn, hand it to its runtime — model turns
 * run on a worker; agent turns are agent_loop runs the workers take), edit, rerun, cancel, close, delete, wait when asked.
 */
@Injectable()
export class AgentChatService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly guidanceRows: GuidanceRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly config: AppConfig,
    private readonly external: ExternalSessionsService,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly factory: AgentChatSessionFactory,
    private readonly starter: AgentChatTurnStarter,
  ) {}

  private get limits() {
    return this.config.agent.chat;
  }

  /** The guardrail settings as session views show them. */
  get limitsView() {
    return this.config.agent.chat;
  }

  async create(p: Principal, request: CreateAgentChatSessionDto): Promise<SessionView> {
    return this.view(p.tenantId, await this.factory.create(p, request));
  }

  async list(tenantId: string, limit: number) {
    return (await this.repo.listSessions(tenantId, limit)).map((s) => toSessionSummary(s, this.limits));
  }

  async require(tenantId: string, id: string): Promise<SessionRow> {
    const s = await this.repo.findSession(tenantId, id);
    if (!s) throw new AgentChatSessionNotFoundError(id);
    return s;
  }

  /** The session as it stands, after the active agent turn (if any) caught up with its run. */
  async view(tenantId: string, id: string): Promise<SessionView> {
    let session = await this.require(tenantId, id);
    const active = await this.repo.activeTurn(id);
    let current: TurnRow | null = null;
    if (active) {
      const now = await this.turns.follow(active);
      current = isActiveTurn(now.status) ? now : null;
      // Following the run moved the turn on: the session row changed with it.
      if (now.status !== active.status) session = await this.require(tenantId, id);
    }
    const messages = await this.repo.messages(id);
    const view = toSessionView(session, messages, current, this.limits);
    if (session.runtime_kind === 'external_agent') await this.external.attachGatewayCosts(tenantId, messages, view.messages);
    return view;
  }

  /** The session's active turn after following its run (null when none is active). */
  async currentTurn(sessionId: string): Promise<TurnRow | null> {
    const active = await this.repo.activeTurn(sessionId);
    if (!active) return null;
    const now = await this.turns.follow(active);
    return isActiveTurn(now.status) ? now : null;
  }

  async remove(tenantId: string, id: string, origin: RequestOrigin | null): Promise<void> {
    const session = await this.require(tenantId, id);
    const active = await this.currentTurn(id);
    if (active) await this.turns.cancel(active, origin);
    const deleted = await this.repo.transaction((m) => this.repo.deleteSession(m, tenantId, id));
    if (!deleted) throw new AgentChatSessionNotFoundError(id);
    if (session.runtime_kind === 'external_agent') await this.external.release(id, 'delete');
    this.turns.announce({ session_id: id, tenant_id: tenantId, id: active?.id, runtime_kind: active?.runtime_kind }, 'deleted');
  }

  async cancel(tenantId: string, id: string, origin: RequestOrigin | null) {
    await this.require(tenantId, id);
    const active = await this.currentTurn(id);
    if (!active) throw new SessionNotRunningError(id);
    const status = await this.turns.cancel(active, origin);
    return { session_id: id, turn_id: active.id, status };
  }

  /** Close: stops a running turn and marks the session closed; its history stays (a new message reopens it). */
  async close(tenantId: string, id: string, origin: RequestOrigin | null): Promise<SessionView> {
    const session = await this.require(tenantId, id);
    const active = await this.currentTurn(id);
    if (active) await this.turns.cancel(active, origin);
    await this.repo.transaction((m) => this.repo.updateSession(m, id, { closed_at: NOW, ...(active ? {} : { status: 'closed' }) }));
    if (session.runtime_kind === 'external_agent') await this.external.release(id, 'close');
    return this.view(tenantId, id);
  }

  /**
   * A new turn: checks, then the user message, the assistant message (empty, queued) and the turn in one transaction
   * under the session's row lock — a second active turn of the session is refused by the unique index (409 busy).
   * A model turn is enqueued for a worker; an agent turn starts (or continues) its agent_loop task.
   */
  start(...args: Parameters<AgentChatTurnStarter['start']>): Promise<StartedTurn> {
    return this.starter.start(...args);
  }

  /**
   * Edit-last-user-message (docs/api.md §5: "updates the stored last user message"): the last live user message keeps its id
   * and its place and takes the new content (`metadata.edited_at`); the answers to its old text become `superseded`
   * (kept in the transcript, out of every later model call's history). `rerun` then answers the edited text under the
   * same message id. 409 while a turn is active.
   */
  async editLastUserMessage(tenantId: string, sessionId: string, content: string): Promise<SessionView> {
    await this.require(tenantId, sessionId);
    checkContentSize(content, this.limits.maxContentBytes, 'content', true);
    const busy = await this.currentTurn(sessionId);
    if (busy) throw busyError(busy);
    await this.repo.transaction(async (m) => {
      if (!(await this.repo.lockSession(m, tenantId, sessionId))) throw new AgentChatSessionNotFoundError(sessionId);
      const active = await this.repo.activeTurn(sessionId, m);
      if (active) throw busyError(active);
      const last = await this.supersedeAnswersToLastUser(m, sessionId);
      await this.repo.updateMessage(m, last.id, { content, metadata: { ...last.metadata, edited_at: new Date().toISOString() } });
      await this.repo.updateSession(m, sessionId, { last_activity_at: NOW });
    });
    return this.view(tenantId, sessionId);
  }

  /**
   * Rerun (docs/api.md §5): stops a running turn first (any api process; waits for it to settle), then re-runs the last user
   * message — its earlier answers become `superseded` — or, with `guidance_content`, runs that as a new user message
   * (a pending `guidance_id` is removed: it is applied now).
   */
  async rerun(
    p: Principal,
    origin: RequestOrigin,
    sessionId: string,
    dto: { guidance_content?: string; guidance_id?: string; runtime_kind?: string; provider?: string; model?: string },
  ): Promise<StartedTurn> {
    await this.require(p.tenantId, sessionId);
    checkContentSize(dto.guidance_content, this.limits.maxContentBytes, 'guidance_content');
    await this.stopAndSettle(sessionId, origin);
    if (dto.guidance_id) await this.guidanceRows.changePendingGuidance(sessionId, dto.guidance_id, null);
    const overrides = { runtime_kind: dto.runtime_kind, provider: dto.provider, model: dto.model };
    if (dto.guidance_content?.trim()) return this.start(p, origin, sessionId, { ...overrides, content: dto.guidance_content });
    const last = await this.repo.transaction((m) => this.supersedeAnswersToLastUser(m, sessionId));
    return this.start(p, origin, sessionId, { ...overrides, content: last.content }, { reuseUserMessageId: last.id });
  }

  /** Stops the active turn (if any) and waits until it settled: on_busy=interrupt, rerun. 409 session_stopping if it does not. */
  async stopAndSettle(sessionId: string, origin: RequestOrigin | null): Promise<void> {
    const active = await this.currentTurn(sessionId);
    if (!active) return;
    await this.turns.cancel(active, origin);
    const settled = await this.waitForTurn(active.id, sessionId, 3 * this.config.tasks.leaseSeconds * 1000 + 10_000, true);
    if (settled && isActiveTurn(settled.status)) throw new SessionStoppingError(active.id);
  }

  /** The last live user message; the settled answers after it become `superseded`. */
  private async supersedeAnswersToLastUser(m: EntityManager, sessionId: string): Promise<MessageRow> {
    const messages = await this.repo.messages(sessionId, m);
    const last = [...messages].reverse().find((x) => x.role === 'user' && x.status !== 'superseded');
    if (!last) throw new InvalidRequestError('this chat has no user message to edit or rerun', { details: { field: 'session_id' } });
    for (const x of messages) {
      if (x.sequence > last.sequence && x.role === 'assistant' && !isActiveTurn(x.status) && x.status !== 'superseded') {
        await this.repo.updateMessage(m, x.id, { status: 'superseded' });
      }
    }
    return last;
  }

  /**
   * Waits until the turn is no longer queued or running (ended, or waiting for an approval) — with `untilEnded`, until
   * it ended — or `timeoutMs` passed: woken by the session's doorbell, re-reading Postgres at least every second.
   */
  async waitForTurn(turnId: string, sessionId: string, timeoutMs = this.limits.waitTimeoutMs, untilEnded = false): Promise<TurnRow | null> {
    const bell = await sessionDoorbell(this.bus, sessionId);
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        let turn = await this.repo.findTurn(turnId);
        if (!turn) return null;
        turn = await this.turns.follow(turn);
        if (untilEnded ? !isActiveTurn(turn.status) : turn.status !== 'queued' && turn.status !== 'running') return turn;
        const left = deadline - Date.now();
        if (left <= 0) return turn;
        await bell.next(Math.min(1000, left));
      }
    } finally {
      await bell.close();
    }
  }
}
