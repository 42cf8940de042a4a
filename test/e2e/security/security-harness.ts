import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { HttpClient, request, type HttpResponse } from '../../support/http';
import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';

export const OPERATOR_TOKEN = 'op-token-security-e2e-0123456789';

export { startFakeUpstream, type FakeUpstream };
export { providerEnv } from '../../support/provider-env';

/** The `all` role in embedded mode with the operator token set. */
export function startSecured(env: Record<string, string>): Promise<ServerProcess> {
  return startServer('all', { ...embeddedEnv(), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN, GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true', ...env });
}

export interface TenantKey {
  id: string;
  prefix: string;
  secret: string;
  tenant_id: string;
  client: HttpClient;
}

/** Creates an API key with the operator token (201 expected) and returns it with a client using it. */
export async function createKey(base: string, scopes: string[], tenantId?: string): Promise<TenantKey> {
  const r = await request(base, 'POST', '/hecate/v1/api-keys', {
    token: OPERATOR_TOKEN,
    body: { name: `k-${scopes.join('-')}`, scopes, ...(tenantId ? { tenant_id: tenantId } : {}) },
  });
  if (r.status !== 201) throw new Error(`creating a key → ${r.status}: ${r.text}`);
  const data = r.body.data as Omit<TenantKey, 'client'>;
  return { ...data, client: new HttpClient(base, data.secret) };
}

export const chatBody = (content = 'hello', extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

/** Completion requests an upstream received (model discovery GETs aside). */
export const completions = (u: FakeUpstream): number => u.requests.filter((r) => r.method === 'POST').length;

export const errorType = (r: HttpResponse): string | undefined => (r.body as { error?: { type?: string } })?.error?.type;

/**
 * Sends the request head and the first bytes of a body of `declaredLength` over a raw socket, never the rest, and
 * resolves with the status line and body the server answered while the body was incomplete (or rejects after
 * `timeoutMs` without an answer).
 */
export function answerBeforeBody(
  base: string,
  { method, path, headers, declaredLength, sent }: { method: string; path: string; headers: Record<string, string>; declaredLength: number; sent: string },
  timeoutMs = 5_000,
): Promise<{ status: number; body: string; bytesSent: number }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let raw = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms while the body was incomplete`));
    }, timeoutMs);
    socket.on('connect', () => {
      const head = [`${method} ${path} HTTP/1.1`, `host: ${url.host}`, `content-length: ${declaredLength}`, 'content-type: application/json'];
      for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
      socket.write(`${head.join('\r\n')}\r\n\r\n${sent}`);
    });
    socket.on('data', (d: Buffer) => {
      raw += d.toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = /content-length:\s*(\d+)/i.exec(raw.slice(0, end));
      if (length && raw.length < end + 4 + Number(length[1])) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(raw.slice(9, 12)), body: raw.slice(end + 4), bytesSent: Buffer.byteLength(sent) });
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined. */
  body: { error?: { type?: string; message?: string } } & Record<string, unknown>;
}

/**
 * One request with exactly the headers given — `Host` and `Origin` included, which fetch will not let a test set —
 * the way a browser (a cross-site form, a DNS-rebound page) or another client sends it. An SSE answer is read for
 * `sseMs` and then cut.
 */
export function rawRequest(
  base: string,
  {
    method = 'GET',
    path,
    headers = {},
    body,
    sseMs = 300,
  }: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; sseMs?: number },
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: Number(url.port),
        method,
        path,
        setHost: false,
        headers: { host: url.host, ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        let text = '';
        let settled = false;
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        const done = () => {
          if (settled) return;
          settled = true;
          let parsed: RawResponse['body'] = {};
          try {
            parsed = JSON.parse(text) as RawResponse['body'];
          } catch {
            // SSE or empty
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        };
        res.on('end', done);
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          setTimeout(() => {
            res.destroy();
            done();
          }, sseMs);
        }
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
