import { sleep } from '@core/async/sleep';
import { isDatabaseConnectionError } from './database.errors';

/** Connection-level failures (terminated backends, restarts) after which retrying the transaction is right. */
export const isTransientDbError = (err: unknown): boolean => isDatabaseConnectionError(err);

/** How long retryTransient keeps trying by default, and the longest pause between two tries. */
const DEFAULT_BUDGET_MS = 8_000;
const MAX_PAUSE_MS = 250;

/**
 * Retries `fn` on transient database errors for up to `budgetMs` (8 s by default), at most 250 ms apart; other errors
 * pass through. Short pauses matter as much as the budget: while backends are being terminated every few milliseconds,
 * each try is a new connection with a small window to finish in, so it is the number of tries that gets one through.
 * The writes of work a worker owns (a run, a turn) go through here: each is token-guarded, so an attempt that did commit
 * before its connection dropped makes the retry a no-op, never a second effect.
 */
export async function retryTransient<T>(fn: () => Promise<T>, budgetMs = DEFAULT_BUDGET_MS): Promise<T> {
  const deadline = Date.now() + budgetMs;
  let delay = 25;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransientDbError(err) || Date.now() + delay > deadline) throw err;
      await sleep(delay);
      delay = Math.min(delay * 2, MAX_PAUSE_MS);
    }
  }
}
