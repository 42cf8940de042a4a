/** Exponential back-off with jitter: the one retry clock of requests and stream reconnects. */
export interface BackoffPolicy {
  /** The first delay; each further attempt doubles it. */
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * The delay before retry number `attempt` (0-based): half of min(max, initial × 2^attempt), plus a random share of
 * the other half (so many clients do not reconnect in step), and never less than what the server asked for
 * (`Retry-After`, the SSE `retry:` field).
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, serverHintMs = 0): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(attempt, 30));
  return Math.max(serverHintMs, ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), 0 when absent. */
export function retryAfterMs(header: string | null): number {
  if (!header) return 0;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : 0;
}
