import { Inject, Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import { EventBus } from '@core/bus/event-bus.port';
import { FEED_CHANNEL, FeedBatchMessage, runChannel, RunBatchMessage } from './event-envelope';
import type { FeedFilter } from './event-store.repository';
import { EventStore } from './event-store.service';
import { replayThenTail, TailSource } from './replay-tail';
import { renderFrame, sseFailure, type SseOpener } from '@core/http/sse';

const PAGE = 500;

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
  constructor(
    private readonly store: EventStore,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  /** One run's events by `sequence` (the caller has checked the tenant owns the run). */
  runSource(tenantId: string, runId: string): TailSource<EventEnvelope> {
    return {
      read: async (after) => {
        const items = await this.store.listRun({ tenantId, runId, afterSequence: after, limit: PAGE });
        const to = items.length > 0 ? items[items.length - 1].sequence : after;
        return { from: after + 1, to, items, more: items.length === PAGE };
      },
      subscribe: (onBatch) =>
        this.bus.subscribe(runChannel(runId), (_channel, message) => {
          const m = message as RunBatchMessage;
          onBatch({ from: m.from, to: m.to, items: m.events });
        }),
      onReconnect: (listener) => this.bus.onReconnect(listener),
      positionOf: (e) => e.sequence,
    };
  }

  /** The public feed of one tenant by `cursor`, with the feed filters applied to replay and live alike. */
  feedSource(filter: FeedFilter): TailSource<EventEnvelope> {
    return {
      read: async (after) => {
        const page = await this.store.listFeed(filter, after, PAGE);
        return { from: after + 1, to: page.head, items: page.events, more: page.events.length === PAGE };
      },
      subscribe: (onBatch) =>
        this.bus.subscribe(FEED_CHANNEL, (_channel, message) => {
          const m = message as FeedBatchMessage;
          const items = m.events.filter((e) => matches(filter, e.tenant_id, e.envelope)).map((e) => e.envelope);
          onBatch({ from: m.from, to: m.to, items });
        }),
      onReconnect: (listener) => this.bus.onReconnect(listener),
      positionOf: (e) => Number(e.cursor ?? 0),
    };
  }

  /** `GET /hecate/v1/events/stream`: `id:` is the feed cursor; frames `event: event`. */
  async serveFeed(open: SseOpener, filter: FeedFilter, after: number): Promise<void> {
    const sse = open();
    sse.comment('ok');
    try {
      await replayThenTail(this.feedSource(filter), {
        after,
        closed: sse.closed,
        replayed: (n) => sse.replayed(n),
        deliver: (items) => {
          for (const e of items) if (!sse.write(feedFrame(e))) return false;
          return true;
        },
      });
    } catch (err) {
      sseFailure(sse, err);
    }
    sse.end();
  }
}
