import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../support/fake-upstream/fake-upstream.js';
import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';

export const OPERATOR_TOKEN = 'op-token-gateway-e2e-0123456789';
export const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
export const jsonHeaders = { ...auth, 'content-type': 'application/json' };

/** Every response body a test saw, so the leak check can grep them all. */
export const seenBodies: string[] = [];

export async function api<T = Record<string, unknown>>(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const headers = { ...(init.body === undefined ? auth : jsonHeaders), ...(init.headers as Record<string, string> | undefined) };
  const res = await fetch(`${base}${path}`, { ...init, headers });
  const text = await res.text();
  seenBodies.push(text);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // SSE or plain text
  }
  return { status: res.status, body: body as T, headers: res.headers };
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

/** PROVIDER_<NAME>_* for a fake upstream. */
export function providerEnv(
  name: string,
  upstream: { url: string },
  extra: { key?: string; protocol?: 'openai' | 'anthropic'; kind?: 'local' | 'cloud'; defaultModel?: string } = {},
): Record<string, string> {
  const p = `PROVIDER_${name.toUpperCase()}`;
  const env: Record<string, string> = { [`${p}_BASE_URL`]: `${upstream.url}/v1` };
  if (extra.key) env[`${p}_API_KEY`] = extra.key;
  if (extra.protocol) env[`${p}_PROTOCOL`] = extra.protocol;
  if (extra.kind) env[`${p}_KIND`] = extra.kind;
  if (extra.defaultModel) env[`${p}_DEFAULT_MODEL`] = extra.defaultModel;
  return env;
}

/** Parses an SSE body into `{event, data}` frames (data JSON-parsed when possible). */
export function sseFrames(text: string): Array<{ event?: string; data: unknown }> {
  return text
    .split(/\n\n/)
    .filter((f) => f.trim() !== '')
    .map((f) => {
      let event: string | undefined;
      let data = '';
      for (const line of f.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      try {
        return { event, data: JSON.parse(data) as unknown };
      } catch {
        return { event, data };
      }
    });
}

export type { FakeUpstream };
