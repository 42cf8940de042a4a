import { sleep } from '@core/async/sleep';
import { isDatabaseConnectionError } from './database.errors';

/** Connection-level failures (terminated backends, restarts) after which retrying the transaction is right. */
export const isTransientDbError = (err: unknown): boolean => isDatabaseConnectionError(err);

/**
 * Retries `fn` on transient database errors with backoff (about 8 s in all); other errors pass through. The writes of
 * work a worker owns (a run, a turn) go through here: each is token-guarded, so an attempt that did commit before its
 * connection dropped makes the retry a no-op, never a second effect.
 */
export async function retryTransient<T>(fn: () => Promise<T>, attempts = 10): Promise<T> {
  let delay = 50;
  for (let i = 1; ; i += 1) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isTransientDbError(err)) throw err;
      await sleep(delay);
      delay = Math.min(delay * 2, 1500);
    }
  }
}
