import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SavedAgents, type SavedAgentSpec, WorkspaceOps } from '@modules/tasks';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { randomHex } from '@core/context/random-hex';
import { InvalidRequestError } from '@core/http/domain-error';
import { RoutePlanningService } from '@modules/inference';
import { ModelCapabilitiesService } from '@modules/providers';
import { type Capabilities, isActiveTurn, type MessageRow, RUNTIME_KINDS, type RuntimeKind, type SessionRow, type TurnRow } from './agent-chat-rows';
import { sessionDoorbell } from './agent-chat-signals';
import { TurnRuntimes } from './turn-runtime';
import { canonicalWorkspace, newChatId } from './agent-chat-inputs';
import { ExternalSessionsService } from './external-sessions.service';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { toSessionSummary, toSessionView, type SessionView } from './agent-chat-view';
import { GuidanceRepository } from './guidance.repository';
import { AgentChatRepository, isUniqueViolation, NOW } from './agent-chat.repository';
import type { CreateAgentChatSessionDto, PostAgentChatMessageDto } from './agent-chat.dto';
import {
  adapterNotFound,
  AgentChatErrorType,
  AgentChatSessionNotFoundError,
  AgentSessionBusyError,
  guardrailExceeded,
  modelCapabilityRequired,
  modelRequired,
  runtimeKindInvalid,
  runtimeMismatch,
  SessionNotRunningError,
  SessionStoppingError,
  workspaceRequired,
  checkContentSize,
} from './agent-chat.errors';

export { newChatId } from './agent-chat-inputs';

/** What a started turn is: the api answers with it (202), streams it, or waits for it. */
export interface StartedTurn {
  turn: TurnRow;
  session: SessionRow;
}

/**
 * Agent Chat sessions on the api side (docs/api.md §4, docs/design.md §11.2): validate, persist the user message and the turn, hand
 * it to its runtime (TurnRuntimes: model turns run on a worker; agent turns are agent_loop runs the workers take),
 * wait when asked.
 */
@Injectable()
export class AgentChatService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly guidanceRows: GuidanceRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly runtimes: TurnRuntimes,
    private readonly routes: RoutePlanningService,
    private readonly capabilities: ModelCapabilitiesService,
    private readonly config: AppConfig,
    private readonly external: ExternalSessionsService,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly ops: WorkspaceOps,
    private readonly savedAgents: SavedAgents,
  ) {}

  private get limits() {
    return this.config.agent.chat;
  }

  /** The guardrail settings as session views show them. */
  get limitsView() {
    return this.config.agent.chat;
  }

  async create(p: Principal, request: CreateAgentChatSessionDto): Promise<SessionView> {
    const agent = request.agent_id ? await this.savedAgents.resolve(p.tenantId, request.agent_id, request.agent_version) : null;
    const dto = agent ? withAgent(request, agent) : request;
    const runtime = this.runtimeOf(dto.runtime_kind ?? 'model');
    if (!this.runtimes.has(runtime)) throw adapterNotFound(dto.adapter_id ?? '');
    if (runtime === 'external_agent' && agent) throw new InvalidRequestError('agent_id: a saved agent runs as runtime_kind model or agent, not external_agent');
    if (runtime === 'external_agent') return this.view(p.tenantId, await this.external.create(p, dto));
    const model = dto.model?.trim() ?? '';
    if (!model) throw modelRequired();
    const workspace = dto.workspace?.trim() ? await canonicalWorkspace(this.ops, p, dto.workspace) : '';
    if (runtime === 'agent' && !workspace) throw workspaceRequired();
    const provider = dto.provider?.trim() ?? '';
    const capabilities = this.capabilitiesOf(provider, model, runtime);
    const session = {
      id: newChatId('agent_chat'),
      tenant_id: p.tenantId,
      title: dto.title?.trim() || 'Hecate Chat',
      runtime_kind: runtime,
      provider,
      model,
      workspace,
      system_prompt: dto.system_prompt ?? '',
      adapter_id: '',
      agent_id: agent?.id ?? '',
      agent_version: agent?.version ?? null,
      capabilities,
      status: 'idle',
      session_started_at: null,
    };
    await this.repo.insertSession(session);
    return this.view(p.tenantId, session.id);
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
  async start(
    p: Principal,
    origin: RequestOrigin,
    sessionId: string,
    dto: PostAgentChatMessageDto,
    opts: { reuseUserMessageId?: string } = {},
  ): Promise<StartedTurn> {
    checkContentSize(dto.content, this.limits.maxContentBytes);
    // One read for the checks below (the hot path of every prompt).
    const ctx = await this.repo.turnContext(p.tenantId, sessionId);
    if (!ctx) throw new AgentChatSessionNotFoundError(sessionId);
    const { session, lastMessage } = ctx;
    const runtime = this.runtimeOf(dto.runtime_kind ?? (session.runtime_kind === 'agent' ? 'agent' : session.runtime_kind));
    if ((session.runtime_kind === 'external_agent') !== (runtime === 'external_agent')) throw runtimeMismatch(session.runtime_kind, runtime);
    if (!this.runtimes.has(runtime)) throw adapterNotFound(session.adapter_id);
    if (!dto.content.trim()) throw new InvalidRequestError('content must not be empty', { details: { field: 'content' } });
    let latest = ctx.latest;
    if (ctx.active) {
      // An active agent turn may have ended with its run: catch up before calling the session busy.
      const now = await this.turns.follow(ctx.active);
      if (isActiveTurn(now.status)) throw this.busyError(now);
      latest = now;
    }
    this.checkGuardrails(session);

    const runner = this.runtimes.get(runtime, session.adapter_id);
    const continuing = runner.continues(latest);
    // A continuing agent segment keeps its model snapshot; everything else takes the turn's overrides.
    const provider = continuing ? continuing.provider : (dto.provider?.trim() ?? session.provider);
    const model = continuing ? continuing.model : dto.model?.trim() || session.model;
    const external = runtime === 'external_agent';
    if (!model && !external) throw modelRequired();
    const workspace = dto.workspace?.trim() ? await canonicalWorkspace(this.ops, p, dto.workspace) : session.workspace;
    if (runtime === 'agent' && !workspace) throw workspaceRequired();
    const capabilities = external ? {} : this.capabilitiesOf(provider, model, runtime);
    if (!external) await this.routes.plan({ provider: provider || undefined, model, needsTools: runtime === 'agent', needsImages: false });

    const sameModelSegment = runtime === 'model' && lastMessage?.runtime_kind === 'model' && lastMessage.provider === provider && lastMessage.model === model;
    const segmentId = continuing ? continuing.segment_id : sameModelSegment ? lastMessage.segment_id : newChatId('seg');
    const turnId = newChatId('turn');
    const userId = opts.reuseUserMessageId ?? newChatId('msg');
    const assistantId = newChatId('msg');
    const snapshot = { runtime_kind: runtime, segment_id: segmentId, provider, model, capabilities, turn_id: turnId };
    const opened = await this.repo
      .openTurn(
        {
          id: turnId,
          tenant_id: p.tenantId,
          session_id: sessionId,
          runtime_kind: runtime,
          status: 'queued',
          segment_id: segmentId,
          user_message_id: userId,
          assistant_message_id: assistantId,
          task_id: null,
          run_id: null,
          stream_id: turnId,
          provider,
          model,
          system_prompt: dto.system_prompt ?? '',
          request_id: origin.requestId,
          trace_id: origin.traceId ?? null,
        },
        [
          ...(opts.reuseUserMessageId
            ? []
            : [{ ...snapshot, id: userId, role: 'user' as const, content: dto.content, status: 'completed', request_id: origin.requestId }]),
          {
            ...snapshot,
            id: assistantId,
            role: 'assistant',
            content: '',
            status: 'queued',
            request_id: origin.requestId,
            trace_id: origin.traceId ?? null,
            span_id: randomHex(8),
            workspace: runtime === 'model' ? '' : workspace,
          },
        ],
        workspace,
      )
      .catch(async (err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        const other = await this.repo.activeTurn(sessionId);
        throw other ? this.busyError(other) : err;
      });
    if (!opened) throw new AgentChatSessionNotFoundError(sessionId);

    const turn = await runner.launch({
      principal: p,
      origin,
      session,
      turn: opened.turn,
      content: dto.content,
      workspace,
      continuing,
      reusedUserMessage: !!opts.reuseUserMessageId,
    });
    this.turns.announce(turn, turn.status);
    return { turn, session: opened.session };
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
    if (busy) throw this.busyError(busy);
    await this.repo.transaction(async (m) => {
      if (!(await this.repo.lockSession(m, tenantId, sessionId))) throw new AgentChatSessionNotFoundError(sessionId);
      const active = await this.repo.activeTurn(sessionId, m);
      if (active) throw this.busyError(active);
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

  private runtimeOf(value: string): RuntimeKind {
    if (!(RUNTIME_KINDS as readonly string[]).includes(value)) throw runtimeKindInvalid(value);
    return value as RuntimeKind;
  }

  private busyError(t: TurnRow) {
    if (t.cancel_requested) return new SessionStoppingError(t.id);
    return new AgentSessionBusyError({ task_id: t.task_id, latest_run_id: t.run_id, run_status: t.status, turn_id: t.id });
  }

  private checkGuardrails(s: SessionRow): void {
    const { maxTurnsPerSession, maxSessionDurationMs, idleTimeoutMs } = this.limits;
    if (maxTurnsPerSession > 0 && s.turns_used >= maxTurnsPerSession) {
      throw guardrailExceeded(AgentChatErrorType.SessionLimitExceeded, `this chat used its ${maxTurnsPerSession} turns`, {
        turns_used: s.turns_used,
        max_turns_per_session: maxTurnsPerSession,
      });
    }
    if (maxSessionDurationMs > 0 && s.session_started_at && Date.now() - new Date(s.session_started_at).getTime() > maxSessionDurationMs) {
      throw guardrailExceeded(AgentChatErrorType.SessionDurationLimitExceeded, 'this chat is older than its wall-clock limit', {
        limit_ms: maxSessionDurationMs,
        session_started_at: new Date(s.session_started_at).toISOString(),
      });
    }
    if (idleTimeoutMs > 0 && s.session_started_at && Date.now() - new Date(s.last_activity_at).getTime() > idleTimeoutMs) {
      throw guardrailExceeded(AgentChatErrorType.SessionIdleTimeout, 'this chat was idle beyond its timeout', {
        limit_ms: idleTimeoutMs,
        last_activity_at: new Date(s.last_activity_at).toISOString(),
      });
    }
  }

  private capabilitiesOf(provider: string, model: string, runtime: RuntimeKind): Capabilities {
    const caps = this.capabilities.effective(provider, model);
    const snapshot = { tool_calling: caps.tool_calling, streaming: caps.streaming, source: caps.source };
    if (runtime === 'agent' && caps.tool_calling === 'none') throw modelCapabilityRequired(provider, model, snapshot);
    return snapshot;
  }
}

/** A saved agent's session fields under the request's own (docs/api.md §5: the agent fills what the request leaves out). */
function withAgent(dto: CreateAgentChatSessionDto, agent: SavedAgentSpec): CreateAgentChatSessionDto {
  return {
    ...dto,
    runtime_kind: dto.runtime_kind ?? agent.runtimeKind,
    provider: dto.provider ?? (agent.provider || undefined),
    model: dto.model ?? (agent.model || undefined),
    system_prompt: dto.system_prompt ?? (agent.systemPrompt || undefined),
  };
}
