/**
 * The one HTTP client of the e2e tests: JSON in, JSON (or text) out, a credential per client. Suites wrap it with
 * domain helpers (tasks-harness `Client`, chat/gateway harness functions); nothing else calls fetch for the API.
 */

/** Response bodies are read loosely in tests (the assertions are what check their shape). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

export interface HttpResponse<T = Loose> {
  status: number;
  /** Parsed JSON, or the text when the body is not JSON (SSE, plain text). */
  body: T;
  text: string;
  headers: Headers;
}

/** Every response body a test saw, so leak checks can grep them all. */
export const seenBodies: string[] = [];

export async function request<T = Loose>(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const payload = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers: { ...headers, ...opts.headers }, body: payload });
  const text = await res.text();
  seenBodies.push(text);
  let body: unknown = text;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    // SSE or plain text
  }
  return { status: res.status, body: body as T, text, headers: res.headers };
}

/** A base URL and a credential. */
export class HttpClient {
  constructor(
    readonly url: string,
    readonly token: string | null,
  ) {}

  call<T = Loose>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse<T>> {
    return request<T>(this.url, method, path, { body, token: this.token, headers });
  }

  /** The `data` of a 2xx answer; anything else throws with the status and body. */
  async ok<T = Loose>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const r = await this.call(method, path, body, headers);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status}: ${r.text}`);
    return (r.body as { data: T }).data;
  }
}
