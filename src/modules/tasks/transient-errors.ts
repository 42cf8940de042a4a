import { sleep } from '@core/async/sleep';
/** Connection-level failures (terminated backends, restarts) after which retrying the transaction is right. */
const TRANSIENT_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
const TRANSIENT_TEXT =
  /terminating connection|Connection terminated|connection.*(closed|ended)|Client has encountered a connection error|timeout exceeded when trying to connect|ECONNRESET|ECONNREFUSED/i;

export function isTransientDbError(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string; message?: string }; message?: string };
  const code = e?.driverError?.code ?? e?.code;
  if (code && TRANSIENT_CODES.has(code)) return true;
  return TRANSIENT_TEXT.test(`${e?.message ?? ''} ${e?.driverError?.message ?? ''}`);
}

/** Retries `fn` on transient database errors with backoff (about 8 s in all); other errors pass through. */
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
