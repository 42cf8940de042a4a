import type { BusChannel } from './channels';
import type { EventBus } from './event-bus.port';

/** A channel's doorbell held open while a caller polls Postgres: `next` waits for a ring (or `ms`, or the signal). */
export interface Doorbell {
  /** Resolves at the next ring since the last call (at once when one came meanwhile), after `ms`, or when `signal` aborts. */
  next(ms: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * Subscribes to a channel for a wait loop (docs/design.md §4.3: doorbells after commit, readers refill from Postgres): a ring
 * that arrives while the caller is reading Postgres is kept, so it never waits out the full timeout for a change it
 * already missed.
 */
export async function channelDoorbell(bus: EventBus, channel: string | BusChannel<unknown>): Promise<Doorbell> {
  let rung = false;
  let wake: (() => void) | undefined;
  const unsubscribe = await bus.subscribe(typeof channel === 'string' ? channel : channel.name, () => {
    if (wake) wake();
    else rung = true;
  });
  return {
    async next(ms, signal) {
      if (rung) {
        rung = false;
        return;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wake = done;
        if (signal?.aborted) done();
        else signal?.addEventListener('abort', done, { once: true });
      });
    },
    // On the way out; the buses' unsubscribe already absorbs a lost connection.
    close: () => unsubscribe().catch(() => undefined),
  };
}
