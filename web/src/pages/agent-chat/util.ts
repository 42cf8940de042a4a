import { useCallback, useState } from 'react';
import { HecateError } from '@hecate/sdk';

/** Any failure as the SDK's error (a thrown non-HecateError becomes a network error). */
export const asHecateError = (err: unknown): HecateError => (err instanceof HecateError ? err : HecateError.network(err, 'request'));

/** Runs a user's action (a click), keeping whether it runs and how it failed. */
export function useAction(): { busy: boolean; error: HecateError | null; run: <T>(fn: () => Promise<T>) => Promise<T | undefined> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<HecateError | null>(null);
  const run = useCallback(async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(asHecateError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

export const runtimeLabel = (kind: string | undefined): string =>
  kind === 'agent' ? 'Hecate Agent' : kind === 'external_agent' ? 'External agent' : kind === 'model' ? 'Model' : (kind ?? '');
