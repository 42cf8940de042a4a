import { HecateError, LiveReply, type AgentChatFrame, type HecateClient, type Schemas } from '@hecate/sdk';

export type Session = Schemas['AgentChatSession'];
export type Message = Schemas['AgentChatMessage'];
export type ApprovalRequested = Schemas['AgentChatApprovalRequestedFrame'];
export type ApprovalResolved = Schemas['AgentChatApprovalResolvedFrame'];

/** One tool call's live output (`tool_progress`) or an External Agent's tool call (`tool_call`, `tool_call_update`). */
export interface ToolActivity {
  id: string;
  title: string;
  status: string;
  output: string;
}

export interface ChatView {
  session: Session | null;
  /** The running turn's reply as streamed so far (folded by the SDK's LiveReply), or null when none streams. */
  live: { turnId: string; messageId: string; text: string; frames: number } | null;
  /** Approvals asked for and not yet decided, in the order asked. */
  pending: ApprovalRequested[];
  /** The latest decisions seen on the stream (newest last, a few kept). */
  resolved: ApprovalResolved[];
  tools: ToolActivity[];
  /** Bumped whenever guidance was taken or sent back as a message: the guidance list is stale. */
  guidanceVersion: number;
  /** Bumped when a turn starts or ends (a `done`): the queued-next list and the sessions list are stale. */
  turnVersion: number;
  connection: 'connecting' | 'live' | 'retrying' | 'failed';
  error: HecateError | null;
}

const INITIAL: ChatView = {
  session: null,
  live: null,
  pending: [],
  resolved: [],
  tools: [],
  guidanceVersion: 0,
  turnVersion: 0,
  connection: 'connecting',
  error: null,
};

const KEEP_RESOLVED = 5;
const RETRY_MS = 3_000;

/**
 * One session's live state in the browser, fed by the SDK's resumable session stream (`client.streams.agentChat`):
 * the transcript from each `snapshot`/`done`, the running turn's reply from its frames (token by token; resumed
 * after a dropped connection by the SDK with nothing repeated, and after a reload from the turn's start), the
 * approvals waiting for a decision, tool output, and the guidance receipts. After a turn's `done` it reconnects and
 * waits for the next turn, as the stream of an idle session does. Read with `useSyncExternalStore`.
 */
export class ChatStore {
  private view: ChatView = INITIAL;
  private readonly listeners = new Set<() => void>();
  private readonly controller = new AbortController();
  private reply = new LiveReply();
  private replyTurn: string | undefined;
  private scheduled = false;

  constructor(
    private readonly client: HecateClient,
    readonly sessionId: string,
  ) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): ChatView => this.view;

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.controller.abort();
    this.listeners.clear();
  }

  /** Puts a session read by a request (an edit, a close) in place until the stream says more. */
  replaceSession(session: Session): void {
    this.set({ session });
  }

  private async loop(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      try {
        for await (const frame of this.client.streams.agentChat(this.sessionId, { signal })) this.apply(frame);
      } catch (err) {
        if (signal.aborted) return;
        const error = err instanceof HecateError ? err : HecateError.network(err, 'session stream');
        // A refusal (the session is gone, the key lacks the scope) will not change by retrying.
        const final = error.status >= 400 && error.status < 500 && error.status !== 429;
        this.set({ error, connection: final ? 'failed' : 'retrying' });
        if (final) return;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  private apply(frame: AgentChatFrame): void {
    switch (frame.event) {
      case 'snapshot':
      case 'done':
        return this.applySession(frame.data, frame.event === 'done');
      case 'delta':
      case 'reset':
        return this.applyReply(frame);
      case 'message':
        if ('role' in frame.data && frame.data.role === 'assistant') return this.applySettled(frame);
        return this.applyGuidanceMessage(frame.data as Schemas['AgentChatGuidanceMessageFrame']);
      case 'guidance.consumed':
        return this.set({ guidanceVersion: this.view.guidanceVersion + 1 });
      case 'approval.requested':
        if (this.view.pending.some((a) => a.approval_id === frame.data.approval_id)) return;
        return this.set({ pending: [...this.view.pending, frame.data], session: this.withTurnStatus('awaiting_approval') });
      case 'approval.resolved':
        return this.set({
          pending: this.view.pending.filter((a) => a.approval_id !== frame.data.approval_id),
          resolved: [...this.view.resolved, frame.data].slice(-KEEP_RESOLVED),
          session: this.withTurnStatus(frame.data.status === 'approved' ? 'running' : undefined),
        });
      case 'tool_progress':
        return this.applyTool(frame.data.tool_call_id, { output: frame.data.text, status: frame.data.closed ? 'completed' : 'running' });
      case 'tool_call':
      case 'tool_call_update':
        return this.applyTool(frame.data.tool_call_id, { title: frame.data.title, status: frame.data.status });
    }
  }

  private applySession(session: Session, done: boolean): void {
    const turn = session.active_turn;
    const wasTurn = this.view.session?.active_turn?.id;
    const patch: Partial<ChatView> = { session, connection: 'live', error: null };
    // A `done` is a turn that ended, even one this page never saw running (it started and ended while the stream
    // reconnected): what it took from the queued-next list is gone from it.
    if ((turn?.id ?? undefined) !== wasTurn || done) patch.turnVersion = this.view.turnVersion + 1;
    if (done || !turn) {
      patch.live = null;
      patch.tools = [];
      patch.pending = [];
      this.replyTurn = undefined;
    } else if (turn.id !== this.replyTurn) {
      // A turn this page has no frames of yet: its frames come from the turn's start, folded anew.
      this.reply = new LiveReply();
      this.replyTurn = turn.id;
      patch.live = null;
      patch.tools = [];
      patch.pending = this.view.pending.filter((a) => a.turn_id === turn.id);
    }
    this.set(patch);
  }

  private applyReply(frame: AgentChatFrame): void {
    const turn = this.view.session?.active_turn;
    if (!turn) return;
    const text = this.reply.apply(frame);
    const live = { turnId: turn.id, messageId: turn.assistant_message_id, text, frames: (this.view.live?.frames ?? 0) + 1 };
    this.set({ live, session: this.withTurnStatus('running') }, true);
  }

  /** The session with its running turn (and reply) in `status`, as the stream's frames say it now is; unchanged when it is already. */
  private withTurnStatus(status: string | undefined): Session | null {
    const session = this.view.session;
    const turn = session?.active_turn;
    if (!session || !turn || !status || turn.status === status) return session;
    const messages = session.messages.map((m) => (m.id === turn.assistant_message_id ? { ...m, status } : m));
    return { ...session, active_turn: { ...turn, status: status as typeof turn.status }, messages };
  }

  private applySettled(frame: AgentChatFrame & { event: 'message' }): void {
    const settled = frame.data as Schemas['AgentChatStreamMessage'];
    const text = this.reply.apply(frame);
    const session = this.view.session;
    const messages = session?.messages.map((m) => (m.id === settled.id ? { ...m, ...settled } : m));
    const live = this.view.live && this.view.live.messageId === settled.id ? { ...this.view.live, text } : this.view.live;
    this.set({ live, ...(session && messages ? { session: { ...session, messages } } : {}) });
  }

  /** Guidance the running turn took: shown in the transcript before the reply goes on; its chip goes away. */
  private applyGuidanceMessage(data: Schemas['AgentChatGuidanceMessageFrame']): void {
    const session = this.view.session;
    const patch: Partial<ChatView> = { guidanceVersion: this.view.guidanceVersion + 1 };
    if (session && !session.messages.some((m) => m.id === data.id)) {
      const assistantId = session.active_turn?.assistant_message_id;
      const at = session.messages.findIndex((m) => m.id === assistantId);
      const template = session.messages[at] ?? session.messages[session.messages.length - 1];
      const message: Message = {
        ...(template ?? { runtime_kind: session.runtime_kind, segment_id: '', capabilities: {} }),
        id: data.id,
        role: 'user',
        content: data.content,
        status: 'completed',
        metadata: data.metadata,
        activities: undefined,
      };
      const messages = [...session.messages];
      messages.splice(at < 0 ? messages.length : at, 0, message);
      patch.session = { ...session, messages };
    }
    this.set(patch);
  }

  private applyTool(id: string, change: { title?: string; status?: string; output?: string }): void {
    const tools = [...this.view.tools];
    const i = tools.findIndex((t) => t.id === id);
    const was = i >= 0 ? tools[i] : { id, title: id, status: 'running', output: '' };
    const next = { ...was, title: change.title ?? was.title, status: change.status ?? was.status, output: was.output + (change.output ?? '') };
    if (i >= 0) tools[i] = next;
    else tools.push(next);
    this.set({ tools });
  }

  /** Deltas come many a frame: they are shown once per animation frame; everything else at once. */
  private set(patch: Partial<ChatView>, batched = false): void {
    this.view = { ...this.view, ...patch };
    if (!batched) return this.emit();
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => this.emit());
  }

  private emit(): void {
    this.scheduled = false;
    for (const l of this.listeners) l();
  }
}

/** The messages to show: the running turn's reply replaced by what streamed so far. */
export function displayedMessages(view: ChatView): Message[] {
  const messages = view.session?.messages ?? [];
  const live = view.live;
  if (!live || live.frames === 0) return messages;
  return messages.map((m) => (m.id === live.messageId ? { ...m, content: live.text } : m));
}
