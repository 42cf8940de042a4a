/** Something that can cancel a wait: an AbortSignal, or the /v1 hot path's cheaper EventEmitter with `aborted`. */
export type Cancellable = AbortSignal | (NodeJS.EventEmitter & { aborted: boolean });

/** Waits `ms`, or less when `signal` aborts (it resolves then; it never rejects). The one abortable sleep. */
export function sleep(ms: number, signal?: Cancellable): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      if (signal instanceof AbortSignal) signal.removeEventListener('abort', done);
      else signal?.off('abort', done);
      resolve();
    }, ms);
    if (signal instanceof AbortSignal) signal.addEventListener('abort', done, { once: true });
    else signal?.once('abort', done);
  });
}
