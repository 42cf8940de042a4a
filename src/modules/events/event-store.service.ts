import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventEnvelope } from '@contracts/events';
import type { RequestOrigin } from '@core/context/request-context';
import { EventPublisher } from './event-publisher.service';
import { EventStoreRepository, type EventSize, FeedFilter, type NewEventRow, type ReplayRow, type SqlFragment } from './event-store.repository';
import { busChannels, type FeedBatchMessage, type RunBatchMessage } from '@core/bus';
import { feedEnvelope, toEnvelope } from './event-envelope';
import { FeedStamper } from './feed-stamper.service';
import { rootLogger } from '@core/logging/logger';

/**
 * Work that must land after a transaction commits and before anyone is told of it (the doorbells): a module that keeps
 * a second record of some events (a run's live stream carries its approval frames) writes it here, so every reader
 * woken by the doorbell finds it. Awaited; failures are logged, never thrown (the commit stands).
 */
export type CommitListener = (appended: readonly AppendedEvent[]) => Promise<void>;

/** What one replay page of a stream may hold: `pageBytes` of event data (at least one event), no event over `eventBytes`. */
export interface ReplayBudget {
  pageBytes: number;
  eventBytes: number;
}

/** How many of the next events fit the page budget (always one); an event left out for its size costs nothing. */
function fitting(sizes: EventSize[], budget: ReplayBudget): number {
  let total = 0;
  let n = 0;
  for (const s of sizes) {
    const cost = s.bytes > budget.eventBytes ? 0 : s.bytes;
    if (n > 0 && total + cost > budget.pageBytes) break;
    total += cost;
    n += 1;
  }
  return n;
}

/** A replayed event; one whose data was too large to stream says so in place of its data. */
function replayEnvelope(row: ReplayRow, budget: ReplayBudget): EventEnvelope {
  const envelope = toEnvelope({ ...row, data: row.data ?? {} });
  if (row.data === null && row.data_bytes > budget.eventBytes) envelope.data = { data_omitted: { bytes: row.data_bytes, max_bytes: budget.eventBytes } };
  return envelope;
}

export interface AppendEventInput {
  tenantId: string;
  /** The stream the event belongs to: its `sequence` is gap-free within this id. */
  runId: string;
  taskId?: string | null;
  sessionId?: string | null;
  type: string;
  data?: Record<string, unknown>;
}

export interface AppendedEvent {
  tenantId: string;
  envelope: EventEnvelope;
}

/** A transaction that collects the events it appends and publishes them after commit. */
export interface EventTx {
  manager: EntityManager;
  emit(input: AppendEventInput): Promise<EventEnvelope>;
  /** Several events of one run, in order, in one statement. */
  emitMany(run: Omit<AppendEventInput, 'type' | 'data'>, events: Array<Pick<AppendEventInput, 'type' | 'data'>>): Promise<EventEnvelope[]>;
}

/**
 * The event store (docs/design.md §4.2–4.3), reusable by any module that owns a stream of events:
 * `append(manager, …)` inside the caller's transaction, then `published(appended)` after the commit
 * (rings the per-run doorbell and stamps public-feed cursors). Never call `published` before commit.
 */
@Injectable()
export class EventStore {
  private readonly commitListeners: CommitListener[] = [];

  constructor(
    private readonly repo: EventStoreRepository,
    private readonly publisher: EventPublisher,
    private readonly stamper: FeedStamper,
  ) {}

  /** Registers work to run after each `transaction` commit with its events, before their doorbells (see CommitListener). */
  onCommit(listener: CommitListener): void {
    this.commitListeners.push(listener);
  }

  private async committed(appended: AppendedEvent[]): Promise<void> {
    if (appended.length === 0) return;
    for (const listener of this.commitListeners) {
      await listener(appended).catch((err: unknown) => rootLogger().warn({ err: String(err) }, 'an after-commit listener of the event store failed'));
    }
  }

  /**
   * Runs `fn` in a transaction; events emitted through `tx.emit` are published after the commit (and
   * discarded with a rollback). The usual way to write state and its events together. `origin` (the HTTP
   * request's or the job's ids; null for the server's own timers) is recorded on every event of the transaction.
   */
  async transaction<T>(fn: (tx: EventTx) => Promise<T>, origin: RequestOrigin | null): Promise<T> {
    const appended: AppendedEvent[] = [];
    const result = await this.repo.transaction((manager) =>
      fn({
        manager,
        emit: async (input) => {
          const a = await this.append(manager, input, origin);
          appended.push(a);
          return a.envelope;
        },
        emitMany: async (run, events) => {
          const rows = await this.repo.appendMany(manager, streamOf(run, origin), eventsOf(events));
          const added = rows.map((row) => ({ tenantId: run.tenantId, envelope: toEnvelope(row) }));
          appended.push(...added);
          return added.map((a) => a.envelope);
        },
      }),
    );
    await this.committed(appended);
    this.published(appended);
    return result;
  }

  /**
   * Writes and events in one statement that commits on its own (EventStoreRepository.appendGuarded): a hot path's
   * transaction without its round trips. Publishes after the commit; null (nothing written) when the guard held no row.
   */
  async appendGuarded(
    guard: SqlFragment,
    writes: SqlFragment[],
    run: Omit<AppendEventInput, 'type' | 'data'>,
    events: Array<Pick<AppendEventInput, 'type' | 'data'>>,
    origin: RequestOrigin | null,
  ): Promise<EventEnvelope[] | null> {
    // Stamped inline (embedded): events committed before this write and still waiting for the stamper's pass (another
    // append of this run, e.g. run.started) get their cursors first, so a run's events keep their order in the feed.
    if (this.repo.stampsInline) await this.stamper.settled();
    const rows = await this.repo.appendGuarded(guard, writes, streamOf(run, origin), eventsOf(events));
    if (!rows) return null;
    const envelopes = rows.map(toEnvelope);
    this.published(
      envelopes.map((envelope) => ({ tenantId: run.tenantId, envelope })),
      !this.repo.stampsInline,
    );
    if (this.repo.stampsInline) {
      // Stamped by the statement itself (embedded mode): the feed doorbell rings here, there is no stamping pass.
      const cursors = rows.map((r) => Number(r.feed_cursor));
      const message: FeedBatchMessage = {
        from: Math.min(...cursors),
        to: Math.max(...cursors),
        events: envelopes.map((envelope) => ({ tenant_id: run.tenantId, envelope })),
      };
      this.publisher.publish(busChannels.eventsFeed, message);
    }
    return envelopes;
  }

  async append(manager: EntityManager, input: AppendEventInput, origin: RequestOrigin | null): Promise<AppendedEvent> {
    const row = await this.repo.append(manager, {
      tenantId: input.tenantId,
      runId: input.runId,
      taskId: input.taskId ?? null,
      sessionId: input.sessionId ?? null,
      type: input.type,
      data: input.data ?? {},
      requestId: origin?.requestId ?? null,
      traceId: origin?.traceId ?? null,
    });
    return { tenantId: input.tenantId, envelope: toEnvelope(row) };
  }

  /** After commit: one doorbell per run (its contiguous batch) and a stamping pass (unless stamped already). Never throws. */
  published(appended: AppendedEvent[], stamp = true): void {
    if (appended.length === 0) return;
    const committedAt = performance.now();
    const byRun = new Map<string, EventEnvelope[]>();
    for (const { envelope } of appended) {
      const list = byRun.get(envelope.run_id) ?? [];
      list.push(envelope);
      byRun.set(envelope.run_id, list);
    }
    for (const [runId, events] of byRun) {
      events.sort((a, b) => a.sequence - b.sequence);
      const message: RunBatchMessage = { from: events[0].sequence, to: events[events.length - 1].sequence, events };
      this.publisher.publish(busChannels.eventsRun.of(runId), message, committedAt);
    }
    if (stamp) this.stamper.kick();
  }

  async listRun(q: { tenantId: string; runId: string; afterSequence: number; limit: number }): Promise<EventEnvelope[]> {
    return (await this.repo.listRun(q)).map(toEnvelope);
  }

  /**
   * One replay page of a run's stream: sizes first, then only the events that fit the budget (stream memory stays
   * bounded whatever a run stored). `more` when events remain after it.
   */
  async replayRun(
    q: { tenantId: string; runId: string; afterSequence: number; limit: number },
    budget: ReplayBudget,
  ): Promise<{ events: EventEnvelope[]; more: boolean }> {
    const sizes = await this.repo.runSizes(q);
    const n = fitting(sizes, budget);
    if (n === 0) return { events: [], more: false };
    const rows = await this.repo.readRun({ ...q, through: sizes[n - 1].pos, omitOver: budget.eventBytes });
    return { events: rows.map((r) => replayEnvelope(r, budget)), more: n < sizes.length || sizes.length === q.limit };
  }

  /** `replayRun` for the public feed; `head` is where the client is caught up to after this page. */
  async replayFeed(filter: FeedFilter, after: number, limit: number, budget: ReplayBudget): Promise<{ events: EventEnvelope[]; head: number; more: boolean }> {
    const head = await this.repo.feedHead();
    if (head <= after) return { events: [], head, more: false };
    const sizes = await this.repo.feedSizes(filter, after, head, limit);
    const n = fitting(sizes, budget);
    if (n === 0) return { events: [], head, more: false };
    const through = sizes[n - 1].pos;
    const rows = await this.repo.readFeed(filter, after, through, budget.eventBytes);
    const more = n < sizes.length || sizes.length === limit;
    return { events: rows.map((r) => feedEnvelope(replayEnvelope(r, budget))), head: more ? through : head, more };
  }

  lastSequence(tenantId: string, runId: string): Promise<number> {
    return this.repo.lastSequence(tenantId, runId);
  }

  /**
   * A page of the public feed after `after` (a feed cursor), in feed form (`sequence` is the feed cursor). `next` is
   * the cursor to pass back: the last event's `sequence`, or — when the page is empty — `after` itself.
   */
  async listFeed(filter: FeedFilter, after: number, limit: number): Promise<{ events: EventEnvelope[]; next: number; head: number }> {
    const head = await this.repo.feedHead();
    const rows = head > after ? await this.repo.listFeed(filter, after, head, limit) : [];
    const events = rows.map((r) => feedEnvelope(toEnvelope(r)));
    const next = events.length > 0 ? events[events.length - 1].sequence : after;
    return { events, next, head: rows.length < limit ? head : next };
  }

  /** Removes a task's events (task deletion). */
  deleteForTask(manager: EntityManager, tenantId: string, taskId: string, runIds: string[]): Promise<void> {
    return this.repo.deleteForTask(manager, tenantId, taskId, runIds);
  }

  prune(q: { olderThan: Date; keepNewest: number; protectedRunIds: string[] }): Promise<number> {
    return this.repo.prune(q);
  }

  /** Waits until every committed event has a feed cursor. */
  flushFeed(): Promise<void> {
    return this.stamper.flush();
  }
}

/** The stream a batch of events goes to, with the request or job that wrote them. */
const streamOf = (run: Omit<AppendEventInput, 'type' | 'data'>, origin: RequestOrigin | null): Omit<NewEventRow, 'type' | 'data'> => ({
  tenantId: run.tenantId,
  runId: run.runId,
  taskId: run.taskId ?? null,
  sessionId: run.sessionId ?? null,
  requestId: origin?.requestId ?? null,
  traceId: origin?.traceId ?? null,
});

const eventsOf = (events: Array<Pick<AppendEventInput, 'type' | 'data'>>): Array<Pick<NewEventRow, 'type' | 'data'>> =>
  events.map((e) => ({ type: e.type, data: e.data ?? {} }));
