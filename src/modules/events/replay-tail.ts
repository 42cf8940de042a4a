/**
 * Replay-then-tail (docs/design.md §4.3), independent of what is streamed: positions are per-run sequences or
 * public-feed cursors. The source replays from Postgres after a position, then live batches from the bus
 * are delivered when they continue where delivery stands; a batch that starts beyond it (a doorbell was
 * lost or arrived out of order) or a bus reconnect triggers a refill from Postgres. Nothing is skipped and
 * nothing is delivered twice.
 */
export interface TailBatch<T> {
  /** First and last position this batch covers (positions of filtered-out items included). */
  from: number;
  to: number;
  items: T[];
  /** From `read`: more items exist after `to`. */
  more?: boolean;
}

export interface TailSource<T> {
  /** Committed items with position > after, ascending; `to` is the last position covered by the read. */
  read(after: number): Promise<TailBatch<T>>;
  /** Live batches; returns the unsubscribe function. */
  subscribe(onBatch: (batch: TailBatch<T>) => void): Promise<() => Promise<void>>;
  /** Called when live delivery may have missed batches (bus reconnect). */
  onReconnect?(listener: () => void): () => void;
  positionOf(item: T): number;
}

export interface TailOptions<T> {
  after: number;
  /**
   * Delivers items in order; resolve false to stop (e.g. terminal event written). `replay`: the replay the consumer
   * asked for, from the store, before it caught up (it may go at the consumer's pace); false for live batches and for
   * the refills that make up for live batches missed later (those keep the slow-consumer bound).
   */
  deliver(items: T[], replay: boolean): Promise<boolean> | boolean;
  /** Resolves when the consumer is gone. */
  closed: Promise<void>;
  /** Live batches buffered while a delivery is in progress; beyond this they are dropped and refilled. */
  maxPending?: number;
  /** Called after the initial replay, with the position reached. */
  onCaughtUp?(position: number): Promise<boolean> | boolean;
  /** Told how many items each read from the store (replay, refill) delivers — not the live ones. */
  replayed?(items: number): void;
}

export async function replayThenTail<T>(source: TailSource<T>, options: TailOptions<T>): Promise<number> {
  const maxPending = options.maxPending ?? 1000;
  let last = options.after;
  let needRefill = true;
  let stopped = false;
  const pending: TailBatch<T>[] = [];
  const retried = new WeakSet<TailBatch<T>>();
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const unsubscribe = await source.subscribe((batch) => {
    if (stopped) return;
    if (pending.length >= maxPending) {
      pending.length = 0;
      needRefill = true;
    } else {
      pending.push(batch);
    }
    notify();
  });
  const offReconnect = source.onReconnect?.(() => {
    needRefill = true;
    notify();
  });
  void options.closed.then(() => {
    stopped = true;
    notify();
  });
  let first = true;
  const deliverAfter = async (items: T[], fromStore: boolean): Promise<boolean> => {
    const fresh = items.filter((i) => source.positionOf(i) > last);
    if (fresh.length === 0) return true;
    if (fromStore) options.replayed?.(fresh.length);
    return options.deliver(fresh, fromStore && first);
  };
  try {
    while (!stopped) {
      if (needRefill) {
        needRefill = false;
        for (;;) {
          const batch = await source.read(last);
          if (stopped) return last;
          if (!(await deliverAfter(batch.items, true))) return last;
          if (batch.items.length > 0) last = Math.max(last, source.positionOf(batch.items[batch.items.length - 1]));
          last = Math.max(last, batch.to);
          if (!batch.more) break;
        }
        if (first) {
          first = false;
          if (options.onCaughtUp && !(await options.onCaughtUp(last))) return last;
        }
        continue;
      }
      const batch = pending.shift();
      if (!batch) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (batch.to <= last) continue;
      if (batch.from > last + 1 && !retried.has(batch)) {
        // Gap: something between was missed; Postgres has it (the doorbell rings after commit).
        retried.add(batch);
        pending.unshift(batch);
        needRefill = true;
        continue;
      }
      if (!(await deliverAfter(batch.items, false))) return last;
      last = Math.max(last, batch.to);
    }
    return last;
  } finally {
    stopped = true;
    offReconnect?.();
    // The buses' unsubscribe already absorbs a lost connection; this only keeps the tail's end from throwing.
    await unsubscribe().catch(() => undefined);
  }
}
