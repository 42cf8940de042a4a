import { Inject, Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import { busChannels } from '@core/bus';
import { feedEnvelope } from './event-envelope';
import type { FeedFilter } from './event-store.repository';
import { EventStore, type ReplayBudget } from './event-store.service';
import { replayThenTail, TailSource } from './replay-tail';
import { renderFrame, sseFailure, type SseOpener } from '@core/http/sse';

const PAGE = 500;
/** Replay pages read at once in this process (each at most one page budget): stream memory does not grow with readers. */
const REPLAY_READS = 8;

/** A counting gate: at most `limit` replay reads hold their page at once. */
class ReplayGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active += 1;
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** Live events as streams carry them: one whose data is over the budget says so instead (computed once per envelope). */
const liveForms = new WeakMap<EventEnvelope, EventEnvelope>();
function bounded(e: EventEnvelope, budget: ReplayBudget): EventEnvelope {
  let form = liveForms.get(e);
  if (!form) {
    const bytes = Buffer.byteLength(JSON.stringify(e.data ?? {}));
    form = bytes > budget.eventBytes ? { ...e, data: { data_omitted: { bytes, max_bytes: budget.eventBytes } } } : e;
    liveForms.set(e, form);
  }
  return form;
}

/** Feed frames are identical for every subscriber: render once per envelope object. */
const feedFrames = new WeakMap<EventEnvelope, string>();
const feedFrame = (e: EventEnvelope): string => {
  let text = feedFrames.get(e);
  if (!text) {
    text = renderFrame({ id: e.cursor, event: 'event', data: JSON.stringify({ object: 'event', data: e }) });
    feedFrames.set(e, text);
  }
  return text;
};

const matches = (filter: FeedFilter, tenantId: string, e: EventEnvelope): boolean =>
  tenantId === filter.tenantId &&
  (!filter.types || filter.types.length === 0 || filter.types.includes(e.type)) &&
  (!filter.taskId || e.task_id === filter.taskId);

/**
 * Replay-then-tail sources over the event store and the bus, and the SSE plumbing around them. Reusable:
 * a module that appends its own events (Agent Chat, live sessions) streams them with `runSource` +
 * an SseStream (core/http/sse) + `replayThenTail`, rendering frames its own way.
 */
@Injectable()
export class EventStreams {
  /** A page holds about one SSE buffer of data; an event whose frame could never fit the buffer is announced, not sent. */
  private readonly budget: ReplayBudget;
  private readonly gate = new ReplayGate(REPLAY_READS);

  constructor(
    private readonly store: EventStore,
    @Inject(EventBus) private readonly bus: EventBus,
    config: AppConfig,
  ) {
    const buffer = config.tasks.sse.maxBufferBytes;
    this.budget = { pageBytes: buffer, eventBytes: Math.max(1024, buffer - 4096) };
  }

  /** One run's events by `sequence` (the caller has checked the tenant owns the run). */
  runSource(tenantId: string, runId: string): TailSource<EventEnvelope> {
    return {
      read: async (after) => {
        const page = await this.gate.run(() => this.store.replayRun({ tenantId, runId, afterSequence: after, limit: PAGE }, this.budget));
        const to = page.events.length > 0 ? page.events[page.events.length - 1].sequence : after;
        return { from: after + 1, to, items: page.events, more: page.more };
      },
      subscribe: (onBatch) =>
        this.bus.listen(busChannels.eventsRun.of(runId), (m) => {
          onBatch({ from: m.from, to: m.to, items: m.events.map((e) => bounded(e, this.budget)) });
        }),
      onReconnect: (listener) => this.bus.onReconnect(listener),
      positionOf: (e) => e.sequence,
    };
  }

  /** The public feed of one tenant by its cursor (the feed envelopes' `sequence`), filters applied to replay and live alike. */
  feedSource(filter: FeedFilter): TailSource<EventEnvelope> {
    return {
      read: async (after) => {
        const page = await this.gate.run(() => this.store.replayFeed(filter, after, PAGE, this.budget));
        return { from: after + 1, to: page.head, items: page.events, more: page.more };
      },
      subscribe: (onBatch) =>
        this.bus.listen(busChannels.eventsFeed, (m) => {
          const items = m.events.filter((e) => matches(filter, e.tenant_id, e.envelope)).map((e) => bounded(feedEnvelope(e.envelope), this.budget));
          onBatch({ from: m.from, to: m.to, items });
        }),
      onReconnect: (listener) => this.bus.onReconnect(listener),
      positionOf: (e) => Number(e.cursor ?? 0),
    };
  }

  /** `GET /hecate/v1/events/stream`: `id:` is the feed cursor (the envelope's `sequence`); frames `event: event`. */
  async serveFeed(open: SseOpener, filter: FeedFilter, after: number): Promise<void> {
    const sse = open();
    sse.comment('ok');
    try {
      await replayThenTail(this.feedSource(filter), {
        after,
        closed: sse.closed,
        replayed: (n) => sse.replayed(n),
        // A page of the replay asked for goes at the client's pace (one write, then wait for the socket); live batches
        // and later refills keep the slow-consumer bound.
        deliver: (items, replay) => (replay ? sse.paced(items.map(feedFrame).join('')) : items.every((e) => sse.write(feedFrame(e)))),
      });
    } catch (err) {
      sseFailure(sse, err);
    }
    sse.end();
  }
}
