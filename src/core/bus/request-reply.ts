import type { BusChannel } from './channels';
import type { EventBus } from './event-bus.port';

/** One question asked over the bus and the answers waited for. */
export interface BusRequest<R> {
  /** Where the answers arrive: subscribed before `send` runs, so no answer can come too early. */
  reply: BusChannel<R>;
  /** Publishes the question (its errors reach the caller). */
  send(): Promise<void>;
  /** How long to wait for answers after `send`; 0 asks without waiting. */
  timeoutMs: number;
  /** Keeps an answer or drops it (default: keeps every one). */
  accept?(answer: R): boolean;
  /** True when the answers kept so far are all that is awaited (default: the first one). */
  enough?(kept: readonly R[]): boolean;
  /** Also checked at once after `send` and then every `everyMs` while waiting: true ends the wait (e.g. Postgres already says so). */
  poll?: { everyMs: number; done(): Promise<boolean> };
}

/**
 * Bus request/reply: subscribe to the reply channel, publish the request, then collect answers until `enough` (by
 * default the first answer), `poll` says done, or the timeout; the reply channel is always unsubscribed. Resolves with
 * the answers kept, in arrival order (none on a timeout). The bus is lossy: a lost answer is a timeout, never a wrong one.
 */
export async function busRequest<R>(bus: EventBus, req: BusRequest<R>): Promise<R[]> {
  const kept: R[] = [];
  const enough = () => (req.enough ? req.enough(kept) : kept.length > 0);
  let wake: () => void = () => undefined;
  let open = true;
  const unsubscribe = await bus.listen(req.reply, (answer) => {
    if (!open || (req.accept && !req.accept(answer))) return;
    kept.push(answer);
    if (enough()) wake();
  });
  try {
    await req.send();
    const deadline = Date.now() + req.timeoutMs;
    while (!enough() && Date.now() < deadline) {
      if (req.poll && (await req.poll.done())) break;
      if (enough()) break;
      const waitMs = req.poll ? req.poll.everyMs : deadline - Date.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, waitMs));
        timer.unref();
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  } finally {
    open = false;
    // The buses' unsubscribe already absorbs a lost connection; the answers kept are returned either way.
    await unsubscribe().catch(() => undefined);
  }
  return kept;
}
