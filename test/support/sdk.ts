import { HecateClient, HecateError, type HecateClientOptions, type HecateResponse } from '@sdk';
import type { Loose } from './http';

/** The SDK (libs/sdk) against a test server: the e2e suites' typed client of /hecate/v1. */
export const sdkClient = (url: string, token: string | null, options: Partial<HecateClientOptions> = {}): HecateClient =>
  new HecateClient({ baseUrl: url, ...(token ? { apiKey: token } : {}), ...options });

/**
 * A call's outcome as `{status, body}` whether it succeeded or was refused (then `body` is the error envelope), for
 * tests that assert refusals next to successes.
 */
export async function settle<T>(call: Promise<HecateResponse<T>>): Promise<{ status: number; body: Loose }> {
  try {
    const r = await call;
    return { status: r.status, body: r.data };
  } catch (err) {
    if (!(err instanceof HecateError) || err.status === 0) throw err;
    return { status: err.status, body: { error: err.body } };
  }
}
