import { busChannels } from '@core/bus';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import type { SseStream } from '@core/http/sse';
import { MemoryLiveStreamBuffer } from '@core/live-streams/memory-live-stream-buffer.adapter';
import type { MetricsService } from '@core/metrics/metrics.service';
import { isActiveTurn, type MessageRow, type TurnRow, type TurnStatus } from './agent-chat-rows';
import { AgentChatStreamService } from './agent-chat-stream.service';
import type { AgentChatRepository } from './agent-chat.repository';
import type { AgentChatService } from './agent-chat.service';
import type { AgentChatTurnsService } from './turns/agent-chat-turns.service';

const TENANT = 'tenant_1';
const SESSION = 'agent_chat_1';

interface Frame {
  id?: string | number;
  event?: string;
  data: string;
}

/** The frames a client of `GET …/sessions/{session_id}/stream` receives, in order, and when the server ends the stream. */
class RecordingStream {
  readonly frames: Frame[] = [];
  private readonly abort = new AbortController();
  private open = true;
  private readonly watchers: Array<() => void> = [];

  get isOpen(): boolean {
    return this.open;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  send(frame: Frame): boolean {
    if (this.open) this.frames.push(frame);
    for (const watch of [...this.watchers]) watch();
    return this.open;
  }

  /** Resolves once the `n`th frame has been sent. */
  sent(n: number): Promise<void> {
    return new Promise((resolve) => {
      const watch = () => {
        if (this.frames.length < n) return;
        this.watchers.splice(this.watchers.indexOf(watch), 1);
        resolve();
      };
      this.watchers.push(watch);
      watch();
    });
  }

  /** Only a shutdown frame reads it; no shutdown here. */
  readonly startAt = (): void => undefined;

  end(): void {
    this.open = false;
    this.abort.abort();
  }

  events(): string[] {
    return this.frames.map((f) => f.event ?? 'message');
  }

  /** The session a `snapshot` or `done` frame carries. */
  session(i: number): { active_turn: { id: string } | null; messages: Array<{ id: string; content: string; status: string }> } {
    return (JSON.parse(this.frames[i].data) as { data: ReturnType<RecordingStream['session']> }).data;
  }
}

/**
 * One session's turns and messages as Postgres holds them, read by the stream through the service's collaborators.
 * `whileSnapshotIsRead` runs once, just after the next snapshot was read: what another process commits meanwhile.
 */
class Chat {
  turns: TurnRow[] = [];
  messages: MessageRow[] = [];
  whileSnapshotIsRead: (() => Promise<void>) | undefined;
  /** Resolves when the stream, having nothing to serve, starts waiting for a turn (it then re-reads the session). */
  waiting: Promise<'waiting for a turn'>;
  private markWaiting!: () => void;

  constructor(private readonly bus: InProcessEventBus) {
    this.waiting = new Promise((resolve) => (this.markWaiting = () => resolve('waiting for a turn')));
  }

  open(id: string, status: TurnStatus, reply = ''): void {
    this.turns.push({ id, session_id: SESSION, tenant_id: TENANT, status, runtime_kind: 'model', stream_id: id, assistant_message_id: `${id}_a` } as TurnRow);
    const message = { session_id: SESSION, runtime_kind: 'model', segment_id: 'seg_1', turn_id: id, capabilities: {}, metadata: {} };
    this.messages.push({ ...message, id: `${id}_u`, role: 'user', content: `prompt of ${id}`, status: 'completed' } as MessageRow);
    this.messages.push({ ...message, id: `${id}_a`, role: 'assistant', content: reply, status } as MessageRow);
  }

  settle(id: string, status: TurnStatus, reply: string): void {
    this.turns = this.turns.map((t) => (t.id === id ? { ...t, status } : t));
    this.messages = this.messages.map((m) => (m.id === `${id}_a` ? { ...m, status, content: reply } : m));
  }

  /** The session's doorbell, as the turn's runtime rings it after a commit. */
  ring(): Promise<void> {
    return this.bus.publish(busChannels.agentChatSession.of(SESSION).name, { tenant_id: TENANT, session_id: SESSION });
  }

  private active(): TurnRow | null {
    const turn = this.turns.find((t) => isActiveTurn(t.status));
    return turn ? { ...turn } : null;
  }

  readonly chats = {
    limitsView: {},
    require: async () => ({ id: SESSION, tenant_id: TENANT }),
    currentTurn: async () => this.active(),
    view: async () => {
      const active = this.active();
      const view = {
        id: SESSION,
        active_turn: active ? { id: active.id, status: active.status, stream_id: active.stream_id, assistant_message_id: active.assistant_message_id } : null,
        messages: this.messages.map((m) => ({ id: m.id, role: m.role, content: m.content, status: m.status })),
      };
      const meanwhile = this.whileSnapshotIsRead;
      this.whileSnapshotIsRead = undefined;
      await meanwhile?.();
      return view;
    },
  };

  readonly repo = {
    findTurn: async (id: string) => {
      const turn = this.turns.find((t) => t.id === id);
      return turn ? { ...turn } : null;
    },
    latestTurn: async () => {
      const turn = this.turns.at(-1);
      return turn ? { ...turn } : null;
    },
    findSession: async () => {
      this.markWaiting();
      return { id: SESSION, tenant_id: TENANT };
    },
    findMessage: async (_session: string, id: string) => this.messages.find((m) => m.id === id) ?? null,
  };
}

/**
 * The session stream (`GET …/agent-chat/sessions/{session_id}/stream`) of an idle session, against the turns a queued-next
 * prompt starts: a turn that begins while the stream reads its snapshot, and ends before the stream looks for it,
 * still reaches the client — its answer and `done` — instead of the stream waiting for the turn after it.
 */
describe('AgentChatStreamService: an idle session stream and the turn that starts as it connects', () => {
  let bus: InProcessEventBus;
  let live: MemoryLiveStreamBuffer;
  let chat: Chat;
  let sse: RecordingStream;
  let service: AgentChatStreamService;

  beforeEach(() => {
    bus = new InProcessEventBus();
    live = new MemoryLiveStreamBuffer(60_000);
    chat = new Chat(bus);
    sse = new RecordingStream();
    const turns = { follow: async (t: TurnRow) => t } as unknown as AgentChatTurnsService;
    const metrics = { liveStreamResumed: () => undefined } as unknown as MetricsService;
    service = new AgentChatStreamService(chat.chats as unknown as AgentChatService, chat.repo as unknown as AgentChatRepository, turns, live, bus, metrics);
  });

  afterEach(async () => {
    sse.end();
    await live.close();
    await bus.close();
  });

  const serve = () => service.serve(() => sse as unknown as SseStream, TENANT, SESSION, { index: 0 });
  /** The stream ended by itself, or sits waiting for a turn. */
  const outcome = (served: Promise<void>) => Promise.race([served.then(() => 'ended' as const), chat.waiting]);

  it('a queued turn that starts and ends while the snapshot is read: a fresh snapshot, its answer, then done', async () => {
    chat.open('turn_1', 'cancelled', 'w00 w01 ');
    chat.whileSnapshotIsRead = async () => {
      chat.open('turn_2', 'completed', 'echo: after this');
      await chat.ring();
    };

    expect(await outcome(serve())).toBe('ended');
    expect(sse.events()).toEqual(['snapshot', 'snapshot', 'message', 'done']);
    expect(sse.session(0).messages.map((m) => m.id)).toEqual(['turn_1_u', 'turn_1_a']);
    expect(sse.session(1).messages.at(-1)).toMatchObject({ id: 'turn_2_a', status: 'completed', content: 'echo: after this' });
    expect(JSON.parse(sse.frames[2].data)).toMatchObject({ id: 'turn_2_a', status: 'completed', content: 'echo: after this' });
    expect(sse.session(3)).toMatchObject({ active_turn: null });
    expect(sse.session(3).messages.at(-1)).toMatchObject({ id: 'turn_2_a', content: 'echo: after this' });
  });

  it('the turn the snapshot shows running ends before the stream follows it: its answer, then done', async () => {
    chat.open('turn_1', 'cancelled', 'w00 w01 ');
    chat.open('turn_2', 'queued');
    chat.whileSnapshotIsRead = async () => {
      chat.settle('turn_2', 'completed', 'echo: after this');
      await chat.ring();
    };

    expect(await outcome(serve())).toBe('ended');
    expect(sse.events()).toEqual(['snapshot', 'snapshot', 'message', 'done']);
    expect(sse.session(0).active_turn).toMatchObject({ id: 'turn_2' });
    expect(JSON.parse(sse.frames[2].data)).toMatchObject({ id: 'turn_2_a', status: 'completed', content: 'echo: after this' });
    expect(sse.session(3)).toMatchObject({ active_turn: null });
  });

  it('a turn the snapshot showed ended is not served again: the stream waits, then streams the next turn live', async () => {
    chat.open('turn_1', 'completed', 'first answer');
    const served = serve();

    expect(await outcome(served)).toBe('waiting for a turn');
    expect(sse.events()).toEqual(['snapshot']);

    chat.open('turn_2', 'running');
    await live.append('turn_2', JSON.stringify({ content: 'echo: ' }));
    await live.append('turn_2', JSON.stringify({ content: 'next' }));
    await chat.ring();
    // The stream follows it (a fresh snapshot and its two deltas) before it ends.
    await sse.sent(4);
    chat.settle('turn_2', 'completed', 'echo: next');
    await live.markDone('turn_2');
    await chat.ring();
    await served;

    expect(sse.events()).toEqual(['snapshot', 'snapshot', 'delta', 'delta', 'message', 'done']);
    expect(sse.frames.filter((f) => f.event === 'delta').map((f) => f.id)).toEqual(['turn_2:turn_2:1', 'turn_2:turn_2:2']);
    expect(JSON.parse(sse.frames[4].data)).toMatchObject({ id: 'turn_2_a', content: 'echo: next' });
  });
});
