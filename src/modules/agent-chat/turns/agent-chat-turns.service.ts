import { Inject, Injectable } from '@nestjs/common';
import { retryTransient } from '@core/database/retry-transient';
import { NOW } from '@core/database/sql';
import type { EntityManager } from 'typeorm';
import { busChannels, EventBus } from '@core/bus';
import type { RequestOrigin } from '@core/context/request-context';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { type AppendedEvent, EventStore } from '@modules/events';
import { TurnRuntimes } from './turn-runtime';
import { ACTIVE_TURN_STATUSES, isActiveTurn, type TurnRow, type TurnStatus } from '../agent-chat-rows';
import { AgentChatRepository } from '../agent-chat.repository';
import type { SessionDoorbell } from '../agent-chat-signals';

export interface TurnEnd {
  status: Extract<TurnStatus, 'completed' | 'failed' | 'cancelled'>;
  content: string;
  error?: { type: string; message: string };
  provider?: string;
  model?: string;
  /** The turn's changes to a git workspace. */
  diff?: { content: string; base_tree: string };
  timing?: Record<string, unknown>;
  /** A task-backed turn's run activity, in Task Detail's vocabulary. */
  activity?: Array<Record<string, unknown>>;
  /** When the turn's work began, for a turn whose row has no start (an agent run that ended before it was seen running). */
  startedAt?: Date;
  /** Runtime-specific fields of the assistant message (an External Agent's adapter, native session, raw output, activities). */
  metadata?: Record<string, unknown>;
}

/** Attempts of a turn's end on transient database errors (retryTransient's backoff: about 40 s in all). */
const END_ATTEMPTS = 30;

/**
 * A turn's state changes, shared by both roles and every runtime: the end of a turn (its assistant message, the turn,
 * the session in one transaction), moves between active states, following and cancelling through its runtime.
 */
@Injectable()
export class AgentChatTurnsService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly runtimes: TurnRuntimes,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
    private readonly events: EventStore,
  ) {}

  /** Rings the session's doorbell (after commit; lossy by design, readers re-read Postgres). */
  announce(ref: { session_id: string; tenant_id: string; id?: string; runtime_kind?: string }, status: string): void {
    const message: SessionDoorbell = { tenant_id: ref.tenant_id, session_id: ref.session_id, turn_id: ref.id, runtime_kind: ref.runtime_kind, status };
    this.bus
      .send(busChannels.agentChatSession.of(ref.session_id), message)
      .catch((err: unknown) => rootLogger().warn({ session_id: ref.session_id, err: String(err) }, 'agent chat doorbell not published'));
  }

  /**
   * Ends a turn: the assistant message gets its content and status, the turn its status, the session its state, in the
   * caller's transaction, with `agent_chat.turn.finished` on the public feed (the session's stream: webhooks hear of
   * every runtime's turns). Only while the turn is active (and, with `token`, only while that token holds it): null when
   * someone else ended or took it; else the event, for `ended` to publish after the commit.
   */
  async endIn(m: EntityManager, turn: TurnRow, end: TurnEnd, token?: string): Promise<AppendedEvent | null> {
    const ok = await this.repo.updateTurn(
      m,
      turn.id,
      {
        status: end.status,
        finished_at: NOW,
        error_kind: end.error?.type ?? '',
        error: end.error?.message ?? '',
        ...(token ? { lease_owner: null, lease_token: null, lease_expires_at: null } : {}),
      },
      token ? { token } : { from: ACTIVE_TURN_STATUSES },
    );
    if (!ok) return null;
    await this.repo.updateMessage(m, turn.assistant_message_id, {
      content: end.content,
      status: end.status,
      error: end.error ?? null,
      completed_at: NOW,
      ...(end.provider ? { provider: end.provider } : {}),
      ...(end.model ? { model: end.model } : {}),
      ...(end.diff ? { diff: end.diff.content, base_tree: end.diff.base_tree } : {}),
      ...(end.timing ? { timing: end.timing } : {}),
      ...(end.activity ? { run_activity: end.activity } : {}),
      ...(end.metadata ? { metadata: end.metadata } : {}),
      // Every runtime's reply has a start (and so a duration), the one it showed while running: the turn's claim or
      // first move to running, else the runtime's (a run that ended before anyone saw it running); a turn that ended
      // before it started started as it ended.
      started_at: turn.started_at ?? end.startedAt ?? NOW,
    });
    await this.repo.updateSession(m, turn.session_id, { status: end.status, last_activity_at: NOW });
    const origin = turn.request_id ? { requestId: turn.request_id, traceId: turn.trace_id ?? undefined } : null;
    return this.events.append(
      m,
      {
        tenantId: turn.tenant_id,
        runId: turn.session_id,
        sessionId: turn.session_id,
        type: 'agent_chat.turn.finished',
        data: {
          session_id: turn.session_id,
          turn_id: turn.id,
          runtime_kind: turn.runtime_kind,
          status: end.status,
          assistant_message_id: turn.assistant_message_id,
          ...(end.provider ? { provider: end.provider } : {}),
          ...(end.model ? { model: end.model } : {}),
          ...(end.error ? { error: { type: end.error.type, message: end.error.message } } : {}),
        },
      },
      origin,
    );
  }

  async end(turn: TurnRow, end: TurnEnd, token?: string): Promise<boolean> {
    // Retried on a dropped connection like the run writes, and longer (about 40 s): this write keeps a reply that was paid
    // for. With `token`, a retry after an attempt that did commit finds the lease gone (null), never a second end.
    const appended = await retryTransient(() => this.repo.transaction((m) => this.endIn(m, turn, end, token)), END_ATTEMPTS);
    if (appended) this.ended(turn, end.status, appended);
    return appended !== null;
  }

  /** After the commit of `endIn`: the turn's event published, the doorbell, and the turn counted. */
  ended(turn: TurnRow, status: TurnEnd['status'], appended: AppendedEvent): void {
    this.events.published([appended]);
    this.announce(turn, status);
    this.metrics.agentTurnEnded(turn.runtime_kind, status);
  }

  /**
   * Moves an active turn (and its message and session) to another active state, e.g. running → awaiting_approval;
   * `runActivity` replaces what the message shows of its run meanwhile (a pending approval, with its id).
   */
  async moveTo(turn: TurnRow, status: 'running' | 'awaiting_approval', runActivity?: Array<Record<string, unknown>>): Promise<void> {
    const moved = await retryTransient(() =>
      this.repo.transaction(async (m) => {
        const ok = await this.repo.updateTurn(m, turn.id, { status, started_at: turn.started_at ?? new Date() }, { from: [turn.status] });
        if (!ok) return false;
        await this.repo.updateMessage(m, turn.assistant_message_id, {
          status,
          started_at: turn.started_at ?? new Date(),
          ...(runActivity ? { run_activity: runActivity } : {}),
        });
        await this.repo.updateSession(m, turn.session_id, { status });
        return true;
      }),
    );
    if (moved) this.announce(turn, status);
  }

  /** An active turn brought up to date by its runtime (an agent turn follows its run). */
  follow(turn: TurnRow): Promise<TurnRow> {
    return isActiveTurn(turn.status) ? this.runtimes.get(turn.runtime_kind).follow(turn) : Promise.resolve(turn);
  }

  /**
   * Stops an active turn from any api process: `cancel_requested` is recorded first (whoever owns the turn — now or
   * after a takeover — ends it cancelled), then its runtime stops what runs it. Returns the turn's status after.
   */
  async cancel(turn: TurnRow, origin: RequestOrigin | null): Promise<string> {
    await this.repo.transaction((m) => this.repo.updateTurn(m, turn.id, { cancel_requested: true }, { from: ACTIVE_TURN_STATUSES }));
    return this.runtimes.get(turn.runtime_kind).cancel({ ...turn, cancel_requested: true }, origin);
  }
}
