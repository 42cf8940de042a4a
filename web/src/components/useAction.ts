import { useCallback, useState } from 'react';

export interface Action {
  /** True while the work runs: its button is disabled and may say so ("Probing…"). */
  busy: boolean;
  /** What the last run threw (undefined once a run starts again). */
  error: unknown;
  /** Runs `work`, keeping what it throws for the page to show with ErrorNotice. */
  run(work: () => Promise<unknown>): Promise<void>;
}

/** One write a component makes on a click (create, probe, approve, apply): its busy state and its error. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
