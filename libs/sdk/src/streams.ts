import { backoffDelay, retryAfterMs, sleep, type BackoffPolicy } from './backoff';
import { HecateError } from './errors';
import type { components } from './generated/schema';
import { readSseFrames, type SseFrame } from './sse';

type Schemas = components['schemas'];

export interface ReconnectPolicy extends BackoffPolicy {
  /** Consecutive failed connections (no frame delivered in between) before the iterator throws. */
  maxAttempts: number;
  /** No byte for this long, heartbeats included (the server pings every 15 s): the connection is dead; reconnect. */
  idleTimeoutMs: number;
}

const DEFAULT_RECONNECT: ReconnectPolicy = { initialDelayMs: 250, maxDelayMs: 10_000, maxAttempts: 20, idleTimeoutMs: 45_000 };

/** What the streams need of the client: URLs, credentials and fetch. */
export interface StreamHost {
  url(path: string, params?: { path?: object; query?: object }): string;
  headers(extra?: Record<string, string>): Record<string, string>;
  readonly fetch: typeof fetch;
}

export interface StreamOptions {
  /** Stops the stream (the iterator ends); breaking out of `for await` does the same. */
  signal?: AbortSignal;
}

/** A frame of the run stream: the event and the run's state after it; `done` ends the stream. */
export interface RunStreamFrame {
  event: 'snapshot' | 'done';
  sequence: number;
  data: Schemas['TaskRunStreamEvent'];
}

/** The `done` frame of a run's live stream: the run's status when the stream ended. */
export interface RunLiveDone {
  run_id: string;
  status: string;
  /** The live buffer had expired: what was missed is in the run's events and artifacts. */
  resume_fallback?: boolean;
}

/**
 * A frame of an agent_loop run's live stream (`GET …/runs/{run_id}/live`), `id` = its index; `done` ends it. A `delta`
 * whose data has a `type` is not a model delta (guidance the loop took, a receipt): read it by that type.
 */
export type RunLiveFrame =
  | { event: 'delta'; id: number; data: Schemas['LiveDeltaFrame'] & { type?: string } }
  | { event: 'tool_progress'; id: number; data: Schemas['ToolProgressFrame'] }
  | { event: 'reset'; id: number; data: Schemas['LiveResetFrame'] }
  | { event: 'approval.requested'; id: number; data: Schemas['AgentChatApprovalRequestedFrame'] }
  | { event: 'approval.resolved'; id: number; data: Schemas['AgentChatApprovalResolvedFrame'] }
  | { event: 'done'; id?: undefined; data: RunLiveDone };

/** A frame of an agent-chat session stream (`GET …/agent-chat/sessions/{session_id}/stream`); `done` ends it. */
export type AgentChatFrame =
  | { event: 'snapshot' | 'done'; id?: undefined; data: Schemas['AgentChatSession'] }
  | { event: 'delta'; id: string; data: Schemas['LiveDeltaFrame'] }
  | { event: 'tool_progress'; id: string; data: Schemas['ToolProgressFrame'] }
  | { event: 'tool_call' | 'tool_call_update'; id: string; data: Schemas['AgentChatToolCallFrame'] }
  | { event: 'message'; id?: string; data: Schemas['AgentChatStreamMessage'] | Schemas['AgentChatGuidanceMessageFrame'] }
  | { event: 'guidance.consumed'; id?: string; data: Schemas['AgentChatGuidanceConsumedFrame'] }
  | { event: 'approval.requested'; id: string; data: Schemas['AgentChatApprovalRequestedFrame'] }
  | { event: 'approval.resolved'; id: string; data: Schemas['AgentChatApprovalResolvedFrame'] }
  /** A model call made again from the start after a takeover: drop the deltas from `from_index` on (see `LiveReply`). */
  | { event: 'reset'; id: string; data: Schemas['LiveResetFrame'] };

/** A frame of `GET …/agent-chat/active-sessions`: after every (re)connection a `snapshot` replaces what you had. */
export type ActiveSessionsFrame =
  { event: 'snapshot'; data: Schemas['AgentChatActiveSession'][] } | { event: 'session.busy' | 'session.idle'; data: Schemas['AgentChatActiveSession'] };

/**
 * How one stream resumes: the URL and `Last-Event-ID` of the next connection, which frames are new (and what they
 * deliver), which one ends the stream.
 */
interface Resumption<F> {
  url(): string;
  lastEventId(): string | undefined;
  /** The frame to deliver, or undefined for one already delivered (or not for the caller). `resumed`: a reconnection. */
  accept(frame: SseFrame, resumed: boolean): F | undefined;
  isTerminal(frame: SseFrame): boolean;
  /** A connection opened (before its first frame). */
  onConnect?(): void;
  /** A shutdown's `reconnect` frame that names where to resume (a stream cut before any frame with an id). */
  reconnectAt?(id: string): void;
}

const json = (frame: SseFrame): unknown => JSON.parse(frame.data) as unknown;
const unwrap = <T>(frame: SseFrame): T => (json(frame) as { data: T }).data;

/**
 * Resumable SSE streams as async iterators. Each reconnects after a dropped connection, a server shutdown
 * (`event: reconnect`), a server-side stream failure (`event: error`) or a silent connection (no heartbeat), with
 * exponential back-off (at least the server's `retry:`), resuming from its cursor so no frame is delivered twice.
 */
export class HecateStreams {
  private readonly policy: ReconnectPolicy;

  constructor(
    private readonly host: StreamHost,
    policy: Partial<ReconnectPolicy> = {},
  ) {
    this.policy = { ...DEFAULT_RECONNECT, ...policy };
  }

  /**
   * `GET /hecate/v1/tasks/{task_id}/runs/{run_id}/stream`: one frame per run event after `afterSequence`, in `sequence`
   * order, each exactly once; resumes with `Last-Event-ID: <sequence>`; ends after `done`.
   */
  run(taskId: string, runId: string, options: StreamOptions & { afterSequence?: number } = {}): AsyncGenerator<RunStreamFrame> {
    let last = options.afterSequence ?? 0;
    return this.resume<RunStreamFrame>(
      {
        url: () => this.host.url('/hecate/v1/tasks/{task_id}/runs/{run_id}/stream', { path: { task_id: taskId, run_id: runId } }),
        lastEventId: () => String(last),
        accept: (frame) => {
          if (frame.event !== 'snapshot' && frame.event !== 'done') return undefined;
          const sequence = Number(frame.id);
          if (frame.event === 'snapshot' && sequence <= last) return undefined;
          last = Math.max(last, sequence);
          return { event: frame.event, sequence, data: unwrap(frame) };
        },
        isTerminal: (frame) => frame.event === 'done',
      },
      options.signal,
    );
  }

  /**
   * `GET /hecate/v1/tasks/{task_id}/runs/{run_id}/live`: an agent_loop run's model deltas, tool output and approval frames
   * after index `afterIndex`, each exactly once in index order; resumes with `Last-Event-ID: <index>`; ends after `done`.
   */
  live(taskId: string, runId: string, options: StreamOptions & { afterIndex?: number } = {}): AsyncGenerator<RunLiveFrame> {
    let last = options.afterIndex ?? 0;
    return this.resume<RunLiveFrame>(
      {
        url: () => this.host.url('/hecate/v1/tasks/{task_id}/runs/{run_id}/live', { path: { task_id: taskId, run_id: runId } }),
        lastEventId: () => (last > 0 ? String(last) : undefined),
        accept: (frame) => {
          if (frame.event === 'done') return { event: 'done', data: json(frame) as RunLiveDone };
          if (frame.id === undefined || !/^\d+$/.test(frame.id)) return undefined;
          const index = Number(frame.id);
          if (index <= last) return undefined;
          last = index;
          return { event: frame.event, id: index, data: json(frame) } as RunLiveFrame;
        },
        isTerminal: (frame) => frame.event === 'done',
      },
      options.signal,
    );
  }

  /**
   * `GET /hecate/v1/events/stream`: the public feed (filtered by event types and task) after `afterCursor` (a feed
   * envelope's `sequence`, the feed position), each event exactly once in that order; resumes with `Last-Event-ID`
   * (the `id:`, equal to the envelope's `sequence`); never ends by itself. `run_sequence` is the event's place in its run.
   */
  events(options: StreamOptions & { eventTypes?: string[]; taskId?: string; afterCursor?: string } = {}): AsyncGenerator<Schemas['EventEnvelope']> {
    let last = BigInt(options.afterCursor ?? 0);
    const query = { event_type: options.eventTypes?.join(','), task_id: options.taskId };
    return this.resume<Schemas['EventEnvelope']>(
      {
        url: () => this.host.url('/hecate/v1/events/stream', { query }),
        lastEventId: () => String(last),
        accept: (frame) => {
          if (frame.event !== 'event' || frame.id === undefined) return undefined;
          const cursor = BigInt(frame.id);
          if (cursor <= last) return undefined;
          last = cursor;
          return unwrap(frame);
        },
        isTerminal: () => false,
      },
      options.signal,
    );
  }

  /**
   * `GET /hecate/v1/agent-chat/sessions/{session_id}/stream`: a `snapshot` of the session, the running (or next) turn's frames,
   * its settled `message`, then `done`. Resumes after the last turn frame (`Last-Event-ID: <turn>:<stream>:<index>`,
   * or the turn named by the last snapshot from its start); a reconnection starts with a fresh `snapshot` (the state
   * now), and what the server repeats of what was already delivered (the settled message) is dropped. Approval frames
   * are turn frames (with ids), delivered once in order like deltas. `lastIndex` resumes the current turn after that index (the API contract's `?last_index=`).
   */
  agentChat(sessionId: string, options: StreamOptions & { lastEventId?: string; lastIndex?: number } = {}): AsyncGenerator<AgentChatFrame> {
    let cursor = options.lastEventId ? parseTurnCursor(options.lastEventId) : undefined;
    const delivered = new Map<string, string>();
    const channel = (event: string) => (event.startsWith('approval.') ? 'approval' : event);
    let sawTurnFrame = false;
    return this.resume<AgentChatFrame>(
      {
        url: () =>
          this.host.url('/hecate/v1/agent-chat/sessions/{session_id}/stream', {
            path: { session_id: sessionId },
            query: cursor ? {} : { last_index: options.lastIndex },
          }),
        lastEventId: () => (cursor ? `${cursor.turn}:${cursor.stream}:${cursor.index}` : undefined),
        accept: (frame, resumed) => {
          if (frame.id !== undefined) {
            const at = parseTurnCursor(frame.id);
            if (!at) return undefined;
            sawTurnFrame = true;
            if (cursor && at.turn === cursor.turn && at.stream === cursor.stream && at.index <= cursor.index) return undefined;
            cursor = at;
            return { event: frame.event, id: frame.id, data: json(frame) } as AgentChatFrame;
          }
          if (frame.event === 'snapshot' || frame.event === 'done') {
            const session = unwrap<Schemas['AgentChatSession']>(frame);
            // Resume a turn we have seen no frame of yet from its start, rather than wait for the next one.
            const turn = session.active_turn;
            if (!cursor && turn) cursor = { turn: turn.id, stream: turn.stream_id, index: 0 };
            return { event: frame.event, data: session };
          }
          // State the server sends again on a resumed connection before new turn frames: drop what equals the last one.
          const key = `${frame.event}\n${frame.data}`;
          if (resumed && !sawTurnFrame && delivered.get(channel(frame.event)) === key) return undefined;
          delivered.set(channel(frame.event), key);
          return { event: frame.event, data: json(frame) } as AgentChatFrame;
        },
        isTerminal: (frame) => frame.event === 'done',
        onConnect: () => {
          sawTurnFrame = false;
        },
        reconnectAt: (id) => {
          cursor ??= parseTurnCursor(id);
        },
      },
      options.signal,
    );
  }

  /**
   * `GET /hecate/v1/agent-chat/active-sessions`: sessions becoming busy or idle. The server keeps no cursor for it:
   * every (re)connection starts with a `snapshot` of the busy sessions, which replaces what the caller had.
   */
  activeSessions(options: StreamOptions = {}): AsyncGenerator<ActiveSessionsFrame> {
    return this.resume<ActiveSessionsFrame>(
      {
        url: () => this.host.url('/hecate/v1/agent-chat/active-sessions'),
        lastEventId: () => undefined,
        accept: (frame) => {
          if (frame.event === 'snapshot') return { event: 'snapshot', data: unwrap(frame) };
          if (frame.event === 'session.busy' || frame.event === 'session.idle') return { event: frame.event, data: json(frame) } as ActiveSessionsFrame;
          return undefined;
        },
        isTerminal: () => false,
      },
      options.signal,
    );
  }

  /** The reconnect loop every stream shares. */
  private async *resume<F>(spec: Resumption<F>, signal?: AbortSignal): AsyncGenerator<F> {
    let failures = 0;
    let serverRetryMs = 0;
    let connections = 0;
    let lastError: HecateError | undefined;
    while (!signal?.aborted) {
      const connection = new Connection(this.policy.idleTimeoutMs, signal);
      const url = spec.url();
      try {
        const lastEventId = spec.lastEventId();
        const res = await this.host.fetch(url, {
          headers: this.host.headers({ accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) }),
          signal: connection.signal,
        });
        if (!res.ok) {
          lastError = await HecateError.fromResponse(res);
          serverRetryMs = retryAfterMs(res.headers.get('retry-after'));
          if (res.status !== 429 && res.status < 500) throw lastError;
        } else {
          spec.onConnect?.();
          const resumed = connections++ > 0;
          for await (const frame of readSseFrames(res.body!, connection.alive)) {
            if (frame.retry !== undefined) serverRetryMs = frame.retry;
            // The server is going away (shutdown), or its stream failed: resume from the cursor.
            if (frame.event === 'reconnect') {
              if (frame.id !== undefined) spec.reconnectAt?.(frame.id);
              break;
            }
            if (frame.event === 'error') {
              lastError = errorFrame(frame);
              break;
            }
            const out = spec.accept(frame, resumed);
            if (out === undefined) continue;
            failures = 0;
            lastError = undefined;
            yield out;
            if (spec.isTerminal(frame)) return;
          }
        }
      } catch (err) {
        if (signal?.aborted) return;
        if (err === lastError) throw err;
        lastError = HecateError.network(err, `GET ${url}`);
      } finally {
        connection.close();
      }
      if (++failures > this.policy.maxAttempts) throw lastError ?? HecateError.network('the stream ended before its last frame', `GET ${url}`);
      try {
        await sleep(backoffDelay(this.policy, failures - 1, serverRetryMs), signal);
      } catch {
        return;
      }
      serverRetryMs = 0;
    }
  }
}

/** One connection's abort: by the caller, by `close()`, or when no byte arrived for `idleMs` (a dead connection). */
class Connection {
  private readonly controller = new AbortController();
  private idle: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerAbort = () => this.controller.abort(this.caller?.reason);

  constructor(
    private readonly idleMs: number,
    private readonly caller?: AbortSignal,
  ) {
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.alive();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Bytes arrived: the connection lives. */
  readonly alive = (): void => {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.controller.abort(new Error(`no data for ${this.idleMs} ms`)), this.idleMs);
  };

  close(): void {
    clearTimeout(this.idle);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }
}

/** `<turn>:<stream>:<index>`, the id of an agent-chat turn frame. */
function parseTurnCursor(id: string): { turn: string; stream: string; index: number } | undefined {
  const m = /^([^:]+):([^:]+):(\d+)$/.exec(id);
  return m ? { turn: m[1], stream: m[2], index: Number(m[3]) } : undefined;
}

/** A stream's `event: error` frame (`{error: {type, message}}`) as the error to throw if reconnecting keeps failing. */
function errorFrame(frame: SseFrame): HecateError {
  try {
    const body = (json(frame) as { error?: Schemas['ErrorBody'] }).error;
    if (body?.type) return new HecateError({ status: 0, type: body.type, message: body.message, body });
  } catch {
    // not JSON
  }
  return new HecateError({ status: 0, type: 'invalid_response', message: `stream error: ${frame.data.slice(0, 200)}` });
}
