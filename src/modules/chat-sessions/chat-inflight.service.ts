import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { BusCancels, busChannels, busRequest, EventBus } from '@core/bus';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { keepLease, LEASE_OWNER } from '@core/lease';
import { ignoreFailure } from '@core/logging/ignore-failure';
import type { LiveResetFrame } from '@modules/inference';
import { DeltaFrame, FrameAccumulator } from './chat-delta-frames';
import type { MessageStatus } from './chat-message';
import { ChatSessionRepository } from './chat-session.repository';
import { toChatMessageResponse } from './chat-session-view.dto';
import { ChatNotRunningError, ChatSessionNotFoundError } from './chat-sessions.errors';
import { ChatTurnLedgerService, TurnKind } from './chat-turn-ledger.service';

/** Why a tracked generation was aborted. */
export type AbortReason = 'stop' | 'taken_over' | 'shutdown';

interface Tracked {
  controller: AbortController;
  sessionId: string;
  /** Ends the heartbeat and the listening for stops. */
  untrack: () => void;
}

/**
 * Ownership of in-flight generations across api processes. The streaming process holds the
 * AbortController and heartbeats the Postgres row; a stop in any process aborts it through the bus
 * (`chat.stop.<session>`), and the owner persists the partial reply. A silent or dead owner is taken over:
 * the stop persists what LiveStreamBuffer holds, and the owner's next heartbeat finds its row gone.
 */
@Injectable()
export class ChatInflightService implements OnModuleDestroy {
  readonly owner = LEASE_OWNER;
  private readonly local = new Map<string, Tracked>();
  /** `chat.stop.<session>` names the generation in its payload. */
  private readonly stops: BusCancels<{ generation_id: string }>;

  constructor(
    private readonly config: AppConfig,
    private readonly sessions: ChatSessionRepository,
    private readonly ledger: ChatTurnLedgerService,
    @Inject(EventBus) private readonly bus: EventBus,
    @Inject(LiveStreamBuffer) private readonly buffer: LiveStreamBuffer,
  ) {
    this.stops = new BusCancels(bus, busChannels.chatStop, (m) => (typeof m?.generation_id === 'string' ? m.generation_id : undefined));
  }

  async onModuleDestroy(): Promise<void> {
    for (const t of this.local.values()) {
      t.untrack();
      t.controller.abort('shutdown' satisfies AbortReason);
    }
    await this.stops.close();
  }

  /** Starts holding a generation: its abort signal and its lease heartbeat (a lost lease aborts it as `taken_over`). */
  async track(generationId: string, sessionId: string, leaseToken: string): Promise<AbortController> {
    await this.stops.listen();
    const controller = new AbortController();
    const { heartbeatMs, staleAfterMs } = this.config.chat.generation;
    const stopBeating = keepLease(() => this.sessions.heartbeat(generationId, leaseToken, staleAfterMs), {
      leaseMs: staleAfterMs,
      intervalMs: heartbeatMs,
      what: { generationId },
      onLost: () => controller.abort('taken_over' satisfies AbortReason),
    });
    const unregister = this.stops.register(generationId, () => controller.abort('stop' satisfies AbortReason));
    this.local.set(generationId, { controller, sessionId, untrack: () => (stopBeating(), unregister()) });
    return controller;
  }

  release(generationId: string): void {
    const t = this.local.get(generationId);
    if (!t) return;
    t.untrack();
    this.local.delete(generationId);
  }

  /** Tells a waiting stop (in any process) that the owner persisted the partial reply. */
  async announceStopped(sessionId: string, generationId: string): Promise<void> {
    await this.bus
      .send(busChannels.chatStopped.of(sessionId), { generation_id: generationId })
      .catch(ignoreFailure('announcing a stopped chat generation', "the stop also polls Postgres for the generation's row and takes over at its timeout"));
  }

  /**
   * POST …/stop: stops the session's in-flight generations (or one, by assistant message id). Answers the
   * stopped messages once their partial output is persisted; 409 `chat_session.not_running` when none runs.
   */
  async stop(tenantId: string, sessionId: string, messageId?: string) {
    const session = await this.sessions.find({ tenantId, id: sessionId });
    if (!session) throw new ChatSessionNotFoundError(sessionId);
    const { stopTimeoutMs } = this.config.chat.generation;
    const running = (await this.sessions.generations(sessionId)).filter((g) => g.messageId && (!messageId || g.messageId === messageId));
    if (running.length === 0) throw new ChatNotRunningError(sessionId);

    // Each owner answers `chat.stopped.<session>` once the partial is persisted; a generation row gone also counts.
    const pending = new Set(running.map((g) => g.id));
    await busRequest(this.bus, {
      reply: busChannels.chatStopped.of(sessionId),
      send: async () => {
        for (const g of running) if (!g.stale && !this.stops.cancelHere(g.id)) await this.stops.cancel(sessionId, { generation_id: g.id });
      },
      timeoutMs: stopTimeoutMs,
      accept: (m) => typeof m?.generation_id === 'string' && pending.delete(m.generation_id),
      enough: () => pending.size === 0,
      poll: {
        everyMs: 100,
        done: async () => {
          for (const id of [...pending]) if (!(await this.sessions.generation(id))) pending.delete(id);
          return pending.size === 0;
        },
      },
    });
    // Owners that did not answer in time (or are dead): persist what the live buffer holds, as stopped.
    for (const g of running) if (pending.has(g.id)) await this.takeOver(tenantId, sessionId, g);
    const stopped = [];
    for (const g of running) {
      const m = await this.sessions.message(sessionId, g.messageId!);
      if (m) stopped.push(toChatMessageResponse(m));
    }
    return { session_id: sessionId, stopped };
  }

  private async takeOver(
    tenantId: string,
    sessionId: string,
    g: { id: string; messageId: string | null; kind: string; previousStatus: string | null },
  ): Promise<void> {
    const message = await this.sessions.message(sessionId, g.messageId!);
    if (!message || message.status !== 'in_progress') return;
    const partial = await this.partialFromBuffer(g.id);
    const kind = g.kind as TurnKind;
    await this.ledger.finish(
      {
        tenantId,
        sessionId,
        generationId: g.id,
        kind,
        assistant: { id: message.id },
        previous: kind === 'continue' ? { message: message.messageJson, status: (g.previousStatus ?? 'stopped') as MessageStatus } : null,
      },
      { status: 'stopped', reply: partial.reply, call: null, restarted: partial.restarted },
    );
  }

  private async partialFromBuffer(streamId: string) {
    const acc = new FrameAccumulator();
    let after = 0;
    for (;;) {
      // Redis unreachable: the take-over persists what was read so far (perhaps nothing) rather than fail the stop.
      const page = await this.buffer.read(streamId, after, { limit: 1000 }).catch(() => ({ chunks: [], done: true, expired: true }));
      for (const c of page.chunks) {
        try {
          acc.add(JSON.parse(c.data) as DeltaFrame | LiveResetFrame);
        } catch {
          // not a delta frame
        }
        after = c.index;
      }
      if (page.chunks.length === 0 || page.done) break;
    }
    return { reply: acc.reply(), restarted: acc.restarted };
  }
}
