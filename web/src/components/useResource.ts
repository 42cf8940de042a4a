import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again (keeps the current data until the answer). */
  reload(): void;
}

/**
 * One read for a component: `load` runs on mount and whenever `deps` change (the previous call aborted), and again on
 * `reload()` or every `refreshMs` when given. The data stays while a reload runs, so lists do not flicker.
 */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList, options: { refreshMs?: number } = {}): Resource<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    loadRef.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `deps` are the caller's, as with useEffect
  }, [...deps, tick]);

  useEffect(() => {
    if (!options.refreshMs) return;
    const timer = window.setInterval(() => setTick((n) => n + 1), options.refreshMs);
    return () => window.clearInterval(timer);
  }, [options.refreshMs]);

  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, reload };
}
