import { useState } from 'react';

/** Runs one write, keeping its error for the form; resolves true when it succeeded. */
export function useSubmit() {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async (write: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await write();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}
