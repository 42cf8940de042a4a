import Anthropic from '@anthropic-ai/sdk';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import OpenAI from 'openai';
import { launchBrowser, openPage, pageProblems } from '../../support/browser';
import { HttpClient } from '../../support/http';
import type { ServerProcess } from '../../support/server-process';
import { createKey, OPERATOR_TOKEN, rawRequest, startSecured } from './security-harness';

/**
 * Issue 33, "an HTTP edge that forgives ordinary clients", played with the clients people use: curl-style requests
 * that declare JSON and send nothing, the official SDKs against a server with no provider yet, and a real browser on
 * a page whose origin the operator listed in GATEWAY_CORS_ORIGINS — next to a page on an origin nobody listed.
 */
describe('the HTTP edge for ordinary clients', () => {
  let server: ServerProcess;
  let api: HttpClient;
  /** Serve the same page on two origins: one listed in GATEWAY_CORS_ORIGINS, one not. The page knows the API's URL. */
  let listed: Server;
  let unlisted: Server;
  const origin = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const page = () => `<!doctype html><meta charset="utf-8"><title>client</title><script>window.API = ${JSON.stringify(server.url)};</script>`;

  beforeAll(async () => {
    [listed, unlisted] = [0, 1].map(() => createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page())));
    await Promise.all([listed, unlisted].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    server = await startSecured({ GATEWAY_CORS_ORIGINS: origin(listed) });
    api = new HttpClient(server.url, OPERATOR_TOKEN);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([listed, unlisted].map((s) => new Promise((r) => s.close(r))));
  });

  const jsonNoBody = (method: string, path: string) =>
    rawRequest(server.url, { method, path, headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' }, body: '' });

  it('takes Content-Type: application/json with an empty body as no body: start, cancel and delete answer as without it', async () => {
    const task = await api.ok('POST', '/hecate/v1/tasks', { title: 'empty-bodies', execution_kind: 'shell', shell_command: 'true' });
    const started = await jsonNoBody('POST', `/hecate/v1/tasks/${task.id}/start`);
    expect(started.status).toBe(200);
    const run = (started.body as { data: { id: string } }).data;
    const cancelled = await jsonNoBody('POST', `/hecate/v1/tasks/${task.id}/runs/${run.id}/cancel`);
    expect({ status: cancelled.status, run_status: (cancelled.body as { data: { status: string } }).data.status }).toEqual({
      status: 200,
      run_status: 'cancelled',
    });
    expect((await jsonNoBody('DELETE', `/hecate/v1/tasks/${task.id}`)).status).toBe(204);
    expect((await api.call('GET', `/hecate/v1/tasks/${task.id}`)).status).toBe(404);
    // A route that needs a body says what is missing, not that the body was empty.
    const create = await jsonNoBody('POST', '/hecate/v1/tasks');
    expect(create.status).toBe(400);
    expect(create.body.error?.type).toBe('invalid_request');
    expect(create.body.error?.message).not.toContain('Body cannot be empty');
    expect(create.body.error?.message).toMatch(/execution_kind/);
  });

  it('always answers an oversized body with its 413, while the client is still sending it (6 tries, 33 MB each)', async () => {
    const body = JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'a'.repeat(33 * 1024 * 1024) }] });
    const seen: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
        body,
      }).then(
        async (res) => ({ status: res.status, type: ((await res.json()) as { error: { type: string } }).error.type }),
        (e: Error & { cause?: { code?: string } }) => ({ failed: e.cause?.code ?? e.message }),
      );
      seen.push(r);
    }
    expect(seen).toEqual(Array(6).fill({ status: 413, type: 'payload_too_large' }));
    // The server is fine afterwards, on the same kind of connection.
    expect((await api.call('GET', '/hecate/v1/tasks')).status).toBe(200);
  });

  it('cuts a client that goes on sending an oversized body past the drain cap (256 MB), and stays healthy', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${OPERATOR_TOKEN}\r\n` +
        `content-type: application/json\r\ncontent-length: ${8 * 1024 ** 3}\r\n\r\n`,
    );
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    const closed = new Promise((r) => socket.once('close', r));
    socket.on('error', () => undefined);
    while (!socket.destroyed && sent < 2 * 1024 ** 3) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(sent).toBeGreaterThan(256 * 1024 ** 2);
    expect(sent).toBeLessThan(1024 ** 3);
    expect((await api.call('GET', '/hecate/v1/tasks')).status).toBe(200);
  });

  it('with no provider configured, a chat request answers 422 naming the variable to set (OpenAI SDK)', async () => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
    const err = (await openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const body = err.error as { type: string; message: string; operator_action: string };
    expect(body).toMatchObject({ type: 'model_not_configured', message: 'no provider is configured' });
    expect(body.operator_action).toContain('PROVIDER_OPENAI_API_KEY=');
    expect(body.operator_action).toContain('PROVIDER_<NAME>_BASE_URL');
  });

  it('walls POST /v1/messages/count_tokens like /v1/messages: no credential, an operator-only key, a foreign Origin, hostile and oversized bodies', async () => {
    const count = (headers: Record<string, string>, body: string) =>
      rawRequest(server.url, { method: 'POST', path: '/v1/messages/count_tokens', headers: { 'content-type': 'application/json', ...headers }, body });
    const ok = JSON.stringify({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] });
    const typeOf = (r: Awaited<ReturnType<typeof count>>) => ({ status: r.status, type: r.body.error?.type });
    expect(typeOf(await count({}, ok))).toEqual({ status: 401, type: 'authentication_error' });
    const operatorOnly = await createKey(server.url, ['operator'], 'tenant-count');
    expect((await count({ 'x-api-key': operatorOnly.secret }, ok)).status).toBe(403);
    const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    const foreign = await count({ ...auth, origin: 'https://evil.example' }, ok);
    expect({ ...typeOf(foreign), code: (foreign.body.error as { code?: string }).code }).toEqual({
      status: 403,
      type: 'permission_error',
      code: 'origin_not_allowed',
    });
    for (const hostile of ['[1,2]', '"x"', JSON.stringify({ model: 'claude-x', messages: 'hi' }), JSON.stringify({ model: 7, messages: [] })]) {
      expect({ hostile, ...typeOf(await count(auth, hostile)) }).toEqual({ hostile, status: 400, type: 'invalid_request' });
    }
    expect((await count(auth, JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'a'.repeat(33 * 1024 * 1024) }] }))).status).toBe(413);
    // A tenant's inference key reaches it (no provider here: the 422 that names the variable), and nothing is stored.
    const tenant = await createKey(server.url, ['inference'], 'tenant-count');
    const answered = await count({ 'x-api-key': tenant.secret }, ok);
    expect({ status: answered.status, code: (answered.body.error as { code?: string } | undefined)?.code }).toEqual({
      status: 422,
      code: 'model_not_configured',
    });
  });

  it("answers a bad credential on /v1/messages with Anthropic's authentication_error (code keeps Hecate's type)", async () => {
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'not-the-token', maxRetries: 0 });
    const err = (await anthropic.messages
      .create({ model: 'claude-x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err.error as { error: { type: string; code: string } }).error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
  });

  it('refuses a foreign Origin on /mcp with a valid token too (the MCP transport rule, in every mode)', async () => {
    const r = await rawRequest(server.url, {
      method: 'POST',
      path: '/mcp',
      headers: {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        origin: 'https://evil.example',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect({ status: r.status, type: r.body.error?.type }).toEqual({ status: 403, type: 'origin_not_allowed' });
  });

  it('lets a page on a GATEWAY_CORS_ORIGINS origin call the API from a real browser, and not a page on any other origin', async () => {
    const browser = await launchBrowser();
    try {
      const call = async (pageOrigin: string) => {
        const context = await browser.newContext();
        const tab = await context.newPage();
        await tab.goto(`${pageOrigin}/`);
        const result = await tab.evaluate(async (token) => {
          const api = (globalThis as unknown as { API: string }).API;
          const auth = { authorization: `Bearer ${token}` };
          try {
            const models = await fetch(`${api}/v1/models`, { headers: auth });
            const created = await fetch(`${api}/hecate/v1/tasks`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({
                title: `cors-${(globalThis as unknown as { location: { port: string } }).location.port}`,
                execution_kind: 'shell',
                shell_command: 'true',
              }),
            });
            return {
              models: models.status,
              object: ((await models.json()) as { object: string }).object,
              created: created.status,
              requestId: created.headers.get('x-request-id'),
            };
          } catch (e) {
            return { error: String(e) };
          }
        }, OPERATOR_TOKEN);
        await context.close();
        return result;
      };
      const fromListed = await call(origin(listed));
      expect(fromListed).toEqual({ models: 200, object: 'list', created: 200, requestId: expect.stringMatching(/^req_/) });
      const fromUnlisted = await call(origin(unlisted));
      expect(fromUnlisted).toEqual({ error: expect.stringContaining('Failed to fetch') });
    } finally {
      await browser.close();
    }
    const titles = ((await api.ok('GET', '/hecate/v1/tasks')) as { title: string }[]).map((t) => t.title).filter((t) => t.startsWith('cors-'));
    expect(titles).toEqual([`cors-${new URL(origin(listed)).port}`]);
  });

  it('serves the API reference at /docs from the server itself: Swagger UI renders the OpenAPI document in chromium, nothing loaded from elsewhere', async () => {
    const browser = await launchBrowser();
    try {
      const { page: tab } = await openPage(browser, server.url, '/docs');
      const requested = new Set<string>();
      tab.on('request', (r) => requested.add(new URL(r.url()).origin));
      await tab
        .getByRole('heading', { name: /Hecate/ })
        .first()
        .waitFor({ timeout: 30_000 });
      // Every tag is listed, collapsed; a click opens one.
      const open = async () => {
        await tab.getByRole('heading', { name: 'Tasks' }).waitFor();
        await tab.getByRole('heading', { name: 'Provider-compatible ingress (/v1)' }).click();
        await tab.getByText('/v1/chat/completions', { exact: true }).first().waitFor();
      };
      await open();
      expect(pageProblems(tab)).toEqual([]);
      await tab.reload();
      await open();
      expect([...requested]).toEqual([server.url]);
    } finally {
      await browser.close();
    }
    const asset = await fetch(`${server.url}/docs/swagger-ui-bundle.js`);
    expect({ status: asset.status, type: asset.headers.get('content-type'), csp: asset.headers.get('content-security-policy') }).toEqual({
      status: 200,
      type: 'text/javascript; charset=utf-8',
      csp: expect.stringContaining("script-src 'self'"),
    });
    expect((await fetch(`${server.url}/docs/package.json`)).status).toBe(404);
  });

  it("answers the listed origin's preflight before authentication and no one else's", async () => {
    const preflight = (from: string) =>
      rawRequest(server.url, {
        method: 'OPTIONS',
        path: '/v1/chat/completions',
        headers: { origin: from, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
      });
    const ok = await preflight(origin(listed));
    expect(ok.status).toBe(204);
    expect(ok.headers).toMatchObject({
      'access-control-allow-origin': origin(listed),
      'access-control-allow-methods': expect.stringContaining('POST'),
      'access-control-allow-headers': 'authorization, content-type, x-stainless-os',
    });
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
    const refused = await preflight(origin(unlisted));
    expect({ status: refused.status, type: refused.body.error?.type, acao: refused.headers['access-control-allow-origin'] }).toEqual({
      status: 403,
      type: 'origin_not_allowed',
      acao: undefined,
    });
  });
});
