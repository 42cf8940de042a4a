/**
 * The promise's value, or undefined when it did not settle within `ms` (a rejection within `ms` rejects). The timer is
 * cleared when the promise wins and never holds the process open: the one bounded wait.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `promise` resolved within `ms` (for promises whose value may itself be undefined). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (
    (await within(
      promise.then(() => true as const),
      ms,
    )) === true
  );
}
