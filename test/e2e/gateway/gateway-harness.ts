import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../support/fake-upstream/fake-upstream.js';
import { request } from '../../support/http';
import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';
import { sseEvents } from '../../support/sse';

export const OPERATOR_TOKEN = 'op-token-gateway-e2e-0123456789';
export const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
export const jsonHeaders = { ...auth, 'content-type': 'application/json' };

export { seenBodies } from '../../support/http';

export async function api<T = Record<string, unknown>>(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const r = await request<T>(base, init.method ?? 'GET', path, {
    rawBody: init.body === undefined ? undefined : String(init.body),
    token: OPERATOR_TOKEN,
    headers: init.headers as Record<string, string> | undefined,
  });
  return { status: r.status, body: r.body, headers: r.headers };
}

export const post = <T = Record<string, unknown>>(base: string, path: string, body: unknown) =>
  api<T>(base, path, { method: 'POST', body: JSON.stringify(body) });

export async function fakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(opts);
}

/** `all` role in embedded mode with the operator token set. */
export function startGateway(env: Record<string, string>, role: 'all' | 'api' = 'all'): Promise<ServerProcess> {
  return startServer(role, { ...(role === 'all' ? embeddedEnv() : {}), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN, ...env });
}

export { providerEnv } from '../../support/provider-env';

/** Parses an SSE body into `{event, data}` frames (data JSON-parsed when possible). */
export const sseFrames = (text: string): Array<{ event?: string; data: unknown }> => sseEvents(text).map((e) => ({ event: e.event, data: e.data }));

export type { FakeUpstream };
