import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { useStack } from '../../support/harness';
import { request } from '../../support/http';
import { sdkClient } from '../../support/sdk';

const TOKEN = 'console-serving-operator-token-0123456789';
const UI_PATHS = ['/', '/sign-in', '/chat', '/chat/ses_123', '/tasks', '/tasks/8b0f3c52-1f0e-4b8e-9d7a-2c3e4f5a6b7c', '/providers', '/usage', '/system'];

/**
 * The api serves the operator console (dist/web) at its UI paths, with a strict Content-Security-Policy and no
 * credential needed for the page itself; every API-shaped path without a route still answers the JSON 404 envelope
 * rather than the page; `GET /hecate/v1/whoami` tells any credential what it may do.
 */
describe('operator console served by the api', () => {
  const suite = useStack({ mode: 'embedded', token: TOKEN });
  const get = (path: string, headers: Record<string, string> = {}) => request(suite.stack.url, 'GET', path, { headers });

  it('answers every UI path with the page, its strict CSP and no credential asked', async () => {
    for (const path of UI_PATHS) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<div id="root"></div>');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp.split('; ')).toEqual(
        expect.arrayContaining(["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]),
      );
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    const page = (await get('/')).text;
    // Every script is a file of this server: no inline script for the CSP to refuse, nothing from another origin.
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\/[^"]+\.js"/);
      expect(body.trim()).toBe('');
    }
    expect(page).not.toMatch(/https?:\/\//);
  });

  it('serves the hashed assets immutable, compressed when asked, revalidated by ETag, and 404s an unknown one', async () => {
    const page = (await get('/')).text;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1];
    const plain = await get(script);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.text.length).toBeGreaterThan(1000);

    const zipped = await fetch(`${suite.stack.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    // fetch decodes it: the same bytes as the plain answer.
    expect(await zipped.text()).toBe(plain.text);
    const raw = await new Promise<Buffer>((resolve, reject) => {
      httpGet(`${suite.stack.url}${script}`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      }).on('error', reject);
    });
    expect(raw.length).toBeLessThan(plain.text.length);
    expect(gunzipSync(raw).toString('utf8')).toBe(plain.text);

    const again = await get(script, { 'if-none-match': plain.headers.get('etag')! });
    expect(again.status).toBe(304);

    const missing = await get('/assets/nope-123.js');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'not_found', request_id: expect.any(String) });
  });

  it('keeps unknown API-shaped paths (and paths the console does not have) on the JSON 404 envelope', async () => {
    const paths = [
      '/v1/nope',
      '/hecate/v1/nope',
      '/hecate/nope',
      '/mcp/nope',
      '/healthz/x',
      '/metrics/x',
      '/openapi.json/x',
      '/chat/a/b',
      '/tasks/a/b',
      '/nope',
    ];
    for (const path of paths) {
      for (const token of [TOKEN, null]) {
        const res = await request(suite.stack.url, 'GET', path, { token });
        expect({ path, status: res.status, type: res.body?.error?.type }).toEqual({ path, status: 404, type: 'not_found' });
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.text).not.toContain('<div id="root">');
      }
    }
    // A UI path answers the page to GET only; the API behind it is untouched.
    const post = await request(suite.stack.url, 'POST', '/chat', { token: TOKEN, body: {} });
    expect(post.status).toBe(404);
    expect(post.body.error.type).toBe('not_found');
    const unauthenticated = await request(suite.stack.url, 'GET', '/hecate/v1/tasks');
    expect(unauthenticated.status).toBe(401);
  });

  it('tells any credential who it is (whoami), and refuses none', async () => {
    const operator = sdkClient(suite.stack.url, TOKEN);
    expect((await operator.get('/hecate/v1/whoami')).data).toEqual({
      kind: 'operator',
      tenant_id: 'default',
      scopes: ['inference', 'operator', 'admin'],
      api_key_id: null,
    });

    const { data: key } = await operator.post('/hecate/v1/api-keys', { body: { name: 'inference only', scopes: ['inference'], tenant_id: 'acme' } });
    const inference = sdkClient(suite.stack.url, key.secret);
    expect((await inference.get('/hecate/v1/whoami')).data).toEqual({ kind: 'api_key', tenant_id: 'acme', scopes: ['inference'], api_key_id: key.id });
    // The key's scopes still hold everywhere else.
    expect((await request(suite.stack.url, 'GET', '/hecate/v1/tasks', { token: key.secret })).status).toBe(403);

    expect((await request(suite.stack.url, 'GET', '/hecate/v1/whoami')).status).toBe(401);
    await operator.delete('/hecate/v1/api-keys/{key_id}', { path: { key_id: key.id } });
    expect((await request(suite.stack.url, 'GET', '/hecate/v1/whoami', { token: key.secret })).status).toBe(401);
  });
});
