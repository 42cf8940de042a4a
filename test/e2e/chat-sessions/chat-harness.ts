import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../support/fake-upstream/fake-upstream.js';
import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';

export const OPERATOR_TOKEN = 'op-token-chat-e2e-0123456789abcdef';
const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
const headers = { ...auth, 'content-type': 'application/json' };

/** Response bodies are read loosely in tests (the assertions are what check their shape). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

export interface Res<T = Loose> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** JSON (or SSE text) from the Hecate API. */
export async function call<T = Loose>(base: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res<T>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? auth : headers), ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // SSE
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

export const fakeUpstream = (opts: FakeUpstreamOptions = {}) => startFakeUpstream({ models: ['gpt-4o-mini', 'claude-sonnet-4-5', 'small-ctx'], ...opts });

/** PROVIDER_<NAME>_* for a fake upstream. */
export function providerEnv(name: string, upstream: { url: string }, protocol: 'openai' | 'anthropic' = 'openai'): Record<string, string> {
  const p = `PROVIDER_${name.toUpperCase()}`;
  return { [`${p}_BASE_URL`]: `${upstream.url}/v1`, [`${p}_API_KEY`]: `sk-${name}-key`, [`${p}_PROTOCOL`]: protocol, [`${p}_KIND`]: 'cloud' };
}

export function startChatServer(env: Record<string, string>, role: 'all' | 'api' = 'all'): Promise<ServerProcess> {
  return startServer(
    role,
    { ...(role === 'all' ? embeddedEnv() : {}), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN, GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true', ...env },
    { timeoutMs: 60_000 },
  );
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: Loose;
}

export function parseSse(text: string): SseEvent[] {
  return text
    .split(/\n\n/)
    .filter((f) => f.trim() !== '' && !f.startsWith(':'))
    .map((f) => {
      const out: SseEvent = { data: '' };
      let data = '';
      for (const line of f.split('\n')) {
        if (line.startsWith('id:')) out.id = line.slice(3).trim();
        else if (line.startsWith('event:')) out.event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      try {
        out.data = JSON.parse(data);
      } catch {
        out.data = data;
      }
      return out;
    });
}

/** Reads an SSE response incrementally; `until` resolves once an event matches. */
export async function openSse(base: string, path: string, body: unknown) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
  const events: SseEvent[] = [];
  let buffer = '';
  const waiters: Array<{ pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
  const pump = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, cut + 2);
          buffer = buffer.slice(cut + 2);
          for (const e of parseSse(frame)) {
            events.push(e);
            for (const w of [...waiters]) {
              if (!w.pred(e)) continue;
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    events,
    until: (pred: (e: SseEvent) => boolean) => {
      const hit = events.find(pred);
      return hit ? Promise.resolve(hit) : new Promise<SseEvent>((resolve) => waiters.push({ pred, resolve }));
    },
    done: pump,
    close: () => controller.abort(),
  };
}

export type { FakeUpstream, ServerProcess };
