import { Injectable } from '@nestjs/common';
import { WorkspaceOps } from '@modules/tasks';
import { AppConfig } from '@core/config/app-config';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { randomHex } from '@core/context/random-hex';
import { isUniqueViolation } from '@core/database/database.errors';
import { InvalidRequestError } from '@core/http/domain-error';
import { RoutePlanningService } from '@modules/inference';
import { ModelCapabilitiesService } from '@modules/providers';
import { type Capabilities, isActiveTurn, type MessageRow, type RuntimeKind, type SessionRow, type TurnRow } from '../agent-chat-rows';
import { TurnRuntimes, type TurnRuntime } from './turn-runtime';
import { canonicalWorkspace, newChatId } from '../agent-chat-inputs';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { AgentChatRepository } from '../agent-chat.repository';
import type { PostAgentChatMessageDto } from '../agent-chat.dto';
import { adapterNotFound, AgentChatSessionNotFoundError, modelRequired, runtimeMismatch, workspaceRequired, checkContentSize } from '../agent-chat.errors';
import { busyError, capabilitiesOf, checkGuardrails, runtimeOf } from './agent-chat-turn-checks';

/** What a started turn is: the api answers with it (202), streams it, or waits for it. */
export interface StartedTurn {
  turn: TurnRow;
  session: SessionRow;
}

/** A new turn as the checks settled it: its runtime, model snapshot, segment and workspace. */
interface TurnPlan {
  session: SessionRow;
  runtime: RuntimeKind;
  runner: TurnRuntime;
  continuing: ReturnType<TurnRuntime['continues']>;
  provider: string;
  model: string;
  workspace: string;
  capabilities: Capabilities | Record<string, never>;
  segmentId: string;
}

/**
 * Message posting: checks a new turn (runtime, busy, guardrails, model, workspace, route), then opens it — the user
 * message, the assistant message (empty, queued) and the turn in one transaction under the session's row lock, a
 * second active turn of the session refused by the unique index (409 busy) — and hands it to its runtime.
 */
@Injectable()
export class AgentChatTurnStarter {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly runtimes: TurnRuntimes,
    private readonly routes: RoutePlanningService,
    private readonly capabilities: ModelCapabilitiesService,
    private readonly config: AppConfig,
    private readonly ops: WorkspaceOps,
  ) {}

  async start(
    p: Principal,
    origin: RequestOrigin,
    sessionId: string,
    dto: PostAgentChatMessageDto,
    opts: { reuseUserMessageId?: string } = {},
  ): Promise<StartedTurn> {
    const plan = await this.plan(p, sessionId, dto);
    const opened = await this.open(p, origin, sessionId, dto, plan, opts.reuseUserMessageId);
    const turn = await plan.runner.launch({
      principal: p,
      origin,
      session: plan.session,
      turn: opened.turn,
      content: dto.content,
      workspace: plan.workspace,
      continuing: plan.continuing,
      reusedUserMessage: !!opts.reuseUserMessageId,
    });
    this.turns.announce(turn, turn.status);
    return { turn, session: opened.session };
  }

  /** The checks of a new turn, in the order the api reports their failures. */
  private async plan(p: Principal, sessionId: string, dto: PostAgentChatMessageDto): Promise<TurnPlan> {
    checkContentSize(dto.content, this.config.agent.chat.maxContentBytes);
    // One read for the checks below (the hot path of every prompt).
    const ctx = await this.repo.turnContext(p.tenantId, sessionId);
    if (!ctx) throw new AgentChatSessionNotFoundError(sessionId);
    const { session, lastMessage } = ctx;
    const runtime = runtimeOf(dto.runtime_kind ?? (session.runtime_kind === 'agent' ? 'agent' : session.runtime_kind));
    if ((session.runtime_kind === 'external_agent') !== (runtime === 'external_agent')) throw runtimeMismatch(session.runtime_kind, runtime);
    if (!this.runtimes.has(runtime)) throw adapterNotFound(session.adapter_id);
    if (!dto.content.trim()) throw new InvalidRequestError('content must not be empty', { details: { field: 'content' } });
    let latest = ctx.latest;
    if (ctx.active) {
      // An active agent turn may have ended with its run: catch up before calling the session busy.
      const now = await this.turns.follow(ctx.active);
      if (isActiveTurn(now.status)) throw busyError(now);
      latest = now;
    }
    checkGuardrails(session, this.config.agent.chat);

    const runner = this.runtimes.get(runtime, session.adapter_id);
    const continuing = runner.continues(latest);
    // A continuing agent segment keeps its model snapshot; everything else takes the turn's overrides.
    const provider = continuing ? continuing.provider : (dto.provider?.trim() ?? session.provider);
    const model = continuing ? continuing.model : dto.model?.trim() || session.model;
    const external = runtime === 'external_agent';
    if (!model && !external) throw modelRequired();
    const workspace = dto.workspace?.trim() ? await canonicalWorkspace(this.ops, p, dto.workspace) : session.workspace;
    if (runtime === 'agent' && !workspace) throw workspaceRequired();
    const capabilities = external ? {} : capabilitiesOf(this.capabilities, provider, model, runtime);
    if (!external) await this.routes.plan({ provider: provider || undefined, model, needsTools: runtime === 'agent', needsImages: false });
    const segmentId = continuing ? continuing.segment_id : (sameModelSegment(runtime, lastMessage, provider, model) ?? newChatId('seg'));
    return { session, runtime, runner, continuing, provider, model, workspace, capabilities, segmentId };
  }

  /** The turn and its messages, written in one transaction; a concurrent active turn makes it 409 busy. */
  private async open(p: Principal, origin: RequestOrigin, sessionId: string, dto: PostAgentChatMessageDto, plan: TurnPlan, reuseUserMessageId?: string) {
    const { runtime, segmentId, provider, model, capabilities, workspace } = plan;
    const turnId = newChatId('turn');
    const userId = reuseUserMessageId ?? newChatId('msg');
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
          ...(reuseUserMessageId
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
        throw other ? busyError(other) : err;
      });
    if (!opened) throw new AgentChatSessionNotFoundError(sessionId);
    return opened;
  }
}

/** A model turn on the same provider and model as the last message continues its segment. */
function sameModelSegment(runtime: RuntimeKind, last: MessageRow | null | undefined, provider: string, model: string): string | undefined {
  return runtime === 'model' && last?.runtime_kind === 'model' && last.provider === provider && last.model === model ? last.segment_id : undefined;
}
