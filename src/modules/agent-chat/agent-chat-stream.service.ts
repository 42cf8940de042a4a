import { Inject, Injectable } from '@nestjs/common';
import { sleep } from '@core/async/sleep';
import { busChannels, EventBus } from '@core/bus';
import type { SseOpener, SseStream } from '@core/http/sse';
import { type LiveChunk, LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { MetricsService } from '@core/metrics/metrics.service';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { isActiveTurn, isFinishedTurn, type SessionRow, type TurnRow } from './agent-chat-rows';
import { sessionDoorbell, type SessionDoorbell } from './agent-chat-signals';
import { AgentChatTurnsService } from './turns/agent-chat-turns.service';
import { toMessageView, toSessionView, type SessionView } from './agent-chat-view';
import { AgentChatRepository } from './agent-chat.repository';
import { AgentChatService } from './agent-chat.service';

/** A client's position: (turn, the turn's live stream, index) — the SSE id `<turn>:<stream>:<index>`. */
export interface ChatCursor {
  turnId?: string;
  streamId?: string;
  index: number;
}

export const parseChatCursor = (lastEventId: string | undefined, lastIndex: number | undefined): ChatCursor => {
  const m = lastEventId ? /^([^:]+):([^:]+):(\d+)$/.exec(lastEventId) : null;
  if (m) return { turnId: m[1], streamId: m[2], index: Number(m[3]) };
  return { index: lastIndex ?? 0 };
};

/**
 * The turns a session stream's snapshot may leave unseen: any after `before` (the newest turn when the snapshot was
 * about to be read: a later one started while it was read, or after it), and `running`, the turn it showed running.
 */
interface UnseenTurns {
  before: string | undefined;
  running: string | undefined;
}

/** Frames a live stream carries besides deltas (their `type`); anything else is a `delta`. */
const TYPED_FRAMES = new Set(['tool_progress', 'tool_call', 'tool_call_update', 'message', 'guidance.consumed', 'approval.requested', 'approval.resolved']);
// A model call made again from the start after a takeover: `reset` (docs/takeover.md), kept in the buffer like the rest.
TYPED_FRAMES.add('reset');
const eventOf = (data: string): string => {
  const type = data.includes('"type"') ? (JSON.parse(data) as { type?: string }).type : undefined;
  return type && TYPED_FRAMES.has(type) ? type : 'delta';
};

/**
 * An approval frame as the session stream sends it: the run's live stream of a Hecate Agent turn holds the task
 * approval's frame without the chat's ids (ApprovalFramesService), so every approval frame gets its session and turn.
 */
const approvalFrameOf = (data: string, turn: TurnRow): string =>
  JSON.stringify({ ...(JSON.parse(data) as Record<string, unknown>), session_id: turn.session_id, turn_id: turn.id });

/** A turn's live-stream chunks as SSE frames (`id: <turn>:<stream>:<index>`); returns the last index sent. */
function sendChunks(sse: SseStream, turn: TurnRow, stream: string, chunks: LiveChunk[], index: number): number {
  for (const chunk of chunks) {
    const event = eventOf(chunk.data);
    sse.send({ id: `${turn.id}:${stream}:${chunk.index}`, event, data: event.startsWith('approval.') ? approvalFrameOf(chunk.data, turn) : chunk.data });
    index = chunk.index;
  }
  return index;
}

/**
 * `GET /hecate/v1/agent-chat/sessions/{session_id}/stream` (docs/api.md §4 and §5, docs/design.md §11.4): a `snapshot` of the session, then the
 * running turn's frames from its live stream — `delta`, `tool_progress`, … each with `id: <turn>:<stream>:<index>` —
 * then `message` (the settled assistant message, from Postgres) and `done`. Any api process serves any session; a
 * cursor resumes after its index; when the buffer lost the stream (expired, or a turn restarted after a lost buffer)
 * the message comes from Postgres with `resume_fallback: true`. A stalled tail re-reads the turn from Postgres, so a
 * lost doorbell never leaves a stream open. Without a running turn the stream waits for the next one; a turn that
 * started after the snapshot was read (a queued-next prompt starts as the turn before it ends) is served even when it
 * has ended already — its `message` and `done` — so a client that reconnects after a `done` never misses it.
 */
@Injectable()
export class AgentChatStreamService {
  constructor(
    private readonly chats: AgentChatService,
    private readonly repo: AgentChatRepository,
    private readonly turns: AgentChatTurnsService,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

  async serve(open: SseOpener, tenantId: string, sessionId: string, cursor: ChatCursor): Promise<void> {
    await this.chats.require(tenantId, sessionId);
    const sse = open();
    // What the snapshot may not show: a turn after the newest one before it was read, or the turn it shows running.
    const before = await this.repo.latestTurn(sessionId);
    const shown = await this.sendSnapshot(sse, tenantId, sessionId);
    const unseen: UnseenTurns = { before: before?.id, running: shown.active_turn?.id };
    let turn = cursor.turnId ? await this.repo.findTurn(cursor.turnId) : null;
    if (turn && turn.session_id !== sessionId) turn = null;
    if (!turn) {
      turn = await this.chats.currentTurn(sessionId);
      if (!turn && cursor.index > 0) turn = await this.repo.latestTurn(sessionId);
      if (turn) cursor = { turnId: turn.id, streamId: turn.stream_id, index: cursor.index };
      // It started after the snapshot was read: the state with its messages first, then its frames.
      if (turn && cursor.index === 0 && turn.id !== unseen.running) await this.sendSnapshot(sse, tenantId, sessionId);
    }
    if (!turn) {
      const next = await this.nextTurn(sse, tenantId, sessionId, unseen);
      if (!next) return;
      // It ended before this stream could follow it: the fresh snapshot has it whole; its message and `done` follow.
      if (!isActiveTurn(next.status)) return this.finish(sse, tenantId, next, false);
      return this.serveTurn(sse, tenantId, next, { index: 0 });
    }
    await this.serveTurn(sse, tenantId, turn, cursor.turnId === turn.id ? cursor : { index: 0 });
  }

  /**
   * The frames of one turn (the stream `POST …/messages {stream: true}` answers with), after a snapshot built from the
   * session the turn was just opened on (one read: its messages).
   */
  async serveStarted(open: SseOpener, session: SessionRow, turn: TurnRow): Promise<void> {
    const sse = open();
    // Cut by a shutdown before its first frame (during the read below), the client still resumes this turn from its start.
    sse.startAt(`${turn.id}:${turn.stream_id}:0`);
    const view = toSessionView(session, await this.repo.messages(session.id), turn, this.chats.limitsView);
    sse.send({ event: 'snapshot', data: JSON.stringify({ object: 'agent_chat_session', data: view }) });
    await this.serveTurn(sse, session.tenant_id, turn, { index: 0 });
  }

  private async sendSnapshot(sse: SseStream, tenantId: string, sessionId: string): Promise<SessionView> {
    const view = await this.chats.view(tenantId, sessionId);
    sse.send({ event: 'snapshot', data: JSON.stringify({ object: 'agent_chat_session', data: view }) });
    return view;
  }

  /**
   * Waits (doorbell, or a Postgres re-read every 2 s) for a turn of an idle session to start; null when the client
   * left. A turn that started and ended while the snapshot was read, or before this wait began (a queued-next turn
   * starts as the one before it ends, and a short one ends at once), counts too: the client has not seen it end.
   */
  private async nextTurn(sse: SseStream, tenantId: string, sessionId: string, unseen: UnseenTurns): Promise<TurnRow | null> {
    const bell = await sessionDoorbell(this.bus, sessionId);
    try {
      while (sse.isOpen) {
        const turn = (await this.chats.currentTurn(sessionId)) ?? (await this.endedUnseen(sessionId, unseen));
        if (turn) {
          await this.sendSnapshot(sse, tenantId, sessionId);
          return turn;
        }
        if (!(await this.repo.findSession(tenantId, sessionId))) {
          sse.end();
          return null;
        }
        await bell.next(2000, sse.signal);
      }
      return null;
    } finally {
      await bell.close();
    }
  }

  private async serveTurn(sse: SseStream, tenantId: string, first: TurnRow, cursor: ChatCursor): Promise<void> {
    let turn = first;
    let stream = turn.stream_id;
    let index = cursor.streamId === undefined || cursor.streamId === stream ? cursor.index : 0;
    let fallback = false;
    const reset = cursor.streamId !== undefined && cursor.streamId !== stream && cursor.index > 0;
    // A resume (a cursor past the start) is counted by how it is served: the buffer, Postgres, or a reset.
    let resumeUncounted = cursor.index > 0 && !reset;
    if (reset) {
      // The client followed a stream this turn no longer writes (an agent turn's run changed, a lost buffer): what it
      // has is replaced by the persisted partial; the new stream's frames follow from its start.
      this.metrics.liveStreamResumed('reset');
      await this.sendMessage(sse, turn, true);
    }
    while (sse.isOpen) {
      // An active turn's stream may not exist yet (queued, or its model has not answered): wait for it, not poll.
      const r = await this.live.read(stream, index, { blockMs: 2000, limit: 500, waitForStart: isActiveTurn(turn.status) });
      if (resumeUncounted) {
        resumeUncounted = false;
        this.metrics.liveStreamResumed(r.expired ? 'fallback' : 'buffer');
      }
      index = sendChunks(sse, turn, stream, r.chunks, index);
      if (r.done) break;
      if (r.chunks.length > 0) continue;
      // Nothing new: the truth is in Postgres.
      turn = (await this.repo.findTurn(turn.id)) ?? turn;
      turn = await this.turns.follow(turn);
      if (!isActiveTurn(turn.status)) {
        fallback = r.expired;
        if (!r.expired) await this.drain(sse, turn, stream, index);
        break;
      }
      if (turn.stream_id !== stream) {
        if (index > 0) await this.sendMessage(sse, turn, true);
        stream = turn.stream_id;
        index = 0;
        continue;
      }
    }
    if (!sse.isOpen) return;
    // The buffer is marked done just after (model turns) or just before (agent runs) the end commits: let it land.
    for (let i = 0; i < 60 && isActiveTurn(turn.status); i++) {
      await sleep(50);
      turn = await this.turns.follow((await this.repo.findTurn(turn.id)) ?? turn);
    }
    await this.finish(sse, tenantId, turn, fallback);
  }

  /** The turn's settled `message`, then `done` with the session as it stands; the stream ends. */
  private async finish(sse: SseStream, tenantId: string, turn: TurnRow, fallback: boolean): Promise<void> {
    await this.sendMessage(sse, turn, fallback);
    sse.send({ event: 'done', data: JSON.stringify({ object: 'agent_chat_session', data: await this.chats.view(tenantId, turn.session_id) }) });
    sse.end();
  }

  /** The session's newest turn when it ended and the snapshot did not show it ended (see `UnseenTurns`). */
  private async endedUnseen(sessionId: string, unseen: UnseenTurns): Promise<TurnRow | null> {
    const latest = await this.repo.latestTurn(sessionId);
    if (!latest || isActiveTurn(latest.status)) return null;
    return latest.id !== unseen.before || latest.id === unseen.running ? latest : null;
  }

  /**
   * The frames of a turn seen ended in Postgres that land just after the end committed (an `approval.resolved` of a
   * rejected or cancelled run is appended after that commit, then the stream's `done`): up to `done`, at most 1 s.
   */
  private async drain(sse: SseStream, turn: TurnRow, stream: string, index: number): Promise<void> {
    const deadline = Date.now() + 1000;
    for (let left = 1000; left > 0 && sse.isOpen; left = deadline - Date.now()) {
      const r = await this.live.read(stream, index, { blockMs: left, limit: 500 });
      index = sendChunks(sse, turn, stream, r.chunks, index);
      if (r.done || r.expired || r.chunks.length === 0) break;
    }
  }

  private async sendMessage(sse: SseStream, turn: TurnRow, fallback: boolean): Promise<void> {
    const message = await this.repo.findMessage(turn.session_id, turn.assistant_message_id);
    if (!message) return;
    sse.send({ event: 'message', data: JSON.stringify({ ...toMessageView(message), ...(fallback ? { resume_fallback: true } : {}) }) });
  }

  /**
   * `GET /hecate/v1/agent-chat/active-sessions` (docs/api.md §5 active sessions): a `snapshot` of the tenant's busy sessions,
   * then `session.busy` / `session.idle` as turns start and end on any process (session doorbells over the bus; after a
   * bus reconnect, a fresh snapshot).
   */
  async serveActive(open: SseOpener, tenantId: string): Promise<void> {
    const sse = open();
    const pending: SessionDoorbell[] = [];
    let ready = false;
    const onBell = (bell: SessionDoorbell) => {
      if (bell.tenant_id !== tenantId || !bell.turn_id) return;
      const busy = isActiveTurn(bell.status);
      if (!busy && !isFinishedTurn(bell.status) && bell.status !== 'deleted') return;
      sse.send({
        event: busy ? 'session.busy' : 'session.idle',
        data: JSON.stringify({ session_id: bell.session_id, turn_id: bell.turn_id, runtime_kind: bell.runtime_kind, status: bell.status }),
      });
    };
    const unsubscribe = await this.bus.listen(busChannels.agentChatSession.all, (bell) => {
      if (ready) onBell(bell);
      else pending.push(bell);
    });
    const snapshot = async () => {
      const turns = await this.repo.activeTurnsOfTenant(tenantId);
      sse.send({
        event: 'snapshot',
        data: JSON.stringify({
          object: 'agent_chat_active_sessions',
          data: turns.map((t) => ({ session_id: t.session_id, turn_id: t.id, runtime_kind: t.runtime_kind, status: t.status })),
        }),
      });
    };
    const stopReconnect = this.bus.onReconnect(
      () =>
        void snapshot().catch(
          ignoreFailure(
            'active-sessions snapshot after a bus reconnect',
            'the stream keeps forwarding later doorbells, and a client that reconnects gets a full snapshot',
          ),
        ),
    );
    try {
      await snapshot();
      ready = true;
      for (const bell of pending.splice(0)) onBell(bell);
      await sse.closed;
    } finally {
      stopReconnect();
      await unsubscribe().catch(ignoreFailure('active-sessions unsubscribe', 'the stream has closed: nothing reads what the subscription would still deliver'));
    }
  }
}
