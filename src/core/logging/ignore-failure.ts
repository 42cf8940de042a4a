import { rootLogger } from './logger';

/**
 * The rejection handler of a promise whose failure changes nothing the caller could act on — a doorbell whose readers
 * refill from Postgres, an unsubscribe or close on the way out, a cache warm-up. The failure is logged (at `debug`,
 * with what failed and why it does not matter), never thrown and never silent. Use it instead of `() => undefined`.
 */
export function ignoreFailure(what: string, why: string): (err: unknown) => void {
  return (err) => rootLogger().debug({ err: err instanceof Error ? err.message : String(err), why }, `${what} failed (ignored)`);
}
