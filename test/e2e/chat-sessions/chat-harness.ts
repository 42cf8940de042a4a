import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../support/fake-upstream/fake-upstream.js';
import { request, type Loose } from '../../support/http';
import { providerEnv as sharedProviderEnv } from '../../support/provider-env';
import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';
import { SseReader, sseEvents, type SseEvent } from '../../support/sse';

export const OPERATOR_TOKEN = 'op-token-chat-e2e-0123456789abcdef';

export type { Loose } from '../../support/http';
export type { SseEvent } from '../../support/sse';

export interface Res<T = Loose> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** JSON (or SSE text) from the Hecate API, with the operator token. */
export function call<T = Loose>(base: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res<T>> {
  return request<T>(base, method, path, { body, token: OPERATOR_TOKEN, headers: extra });
}

export const fakeUpstream = (opts: FakeUpstreamOptions = {}) => startFakeUpstream({ models: ['gpt-4o-mini', 'claude-sonnet-4-5', 'small-ctx'], ...opts });

/** PROVIDER_<NAME>_* for a fake upstream (a cloud provider with a key). */
export const providerEnv = (name: string, upstream: { url: string }, protocol: 'openai' | 'anthropic' = 'openai'): Record<string, string> =>
  sharedProviderEnv(name, upstream, { key: `sk-${name}-key`, protocol, kind: 'cloud' });

export function startChatServer(env: Record<string, string>, role: 'all' | 'api' = 'all'): Promise<ServerProcess> {
  return startServer(
    role,
    { ...(role === 'all' ? embeddedEnv() : {}), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN, GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true', ...env },
    { timeoutMs: 60_000 },
  );
}

/** Parses a whole SSE body into events (comments dropped, data JSON-parsed). */
export const parseSse = (text: string): SseEvent[] => sseEvents(text);

/** Opens a streamed POST; `until` resolves once an event matches, `done` when the stream ends. */
export async function openSse(base: string, path: string, body: unknown): Promise<SseReader> {
  const reader = new SseReader(`${base}${path}`, { method: 'POST', body, token: OPERATOR_TOKEN });
  await reader.opened;
  return reader;
}

export type { FakeUpstream, ServerProcess };
