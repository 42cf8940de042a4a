import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient } from '../../support/http';
import { embeddedEnv, type ServerProcess, startServer } from '../../support/server-process';
import { answerBeforeBody, OPERATOR_TOKEN, rawRequest, type RawResponse, startSecured } from './security-harness';

/**
 * Issue 26, "a web page drives the local server": what a browser can send on a visitor's behalf — cross-site forms
 * (urlencoded, text/plain, multipart), requests from a page on another origin, and a DNS-rebound page whose own
 * host name resolves to 127.0.0.1 — played against the no-token server (every loopback caller is the local operator)
 * and against a server with GATEWAY_AUTH_TOKEN.
 */
describe('the browser wall: Host, Origin and content type', () => {
  let local: ServerProcess;
  let secured: ServerProcess;
  let port: number;
  /** Stands for the MCP server a probe would contact: every request that reaches it means a probe ran. */
  let listener: Server;
  let listenerUrl: string;
  let hits = 0;
  const marker = `/mcp-${randomUUID()}`;

  beforeAll(async () => {
    // Only requests for this run's secret path count (other processes on the machine may dial a free port).
    listener = createServer((req, res) => {
      if (req.url === marker) hits += 1;
      req.resume();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}${marker}`;
    [local, secured] = await Promise.all([
      startServer('all', {
        ...embeddedEnv(),
        GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
        GATEWAY_ALLOWED_HOSTS: 'devbox.test',
        GATEWAY_ALLOWED_ORIGINS: 'http://console.test:3000',
      }),
      startSecured({ GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true' }),
    ]);
    port = local.port;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([local?.stop(), secured?.stop()]);
    await new Promise((r) => listener?.close(r));
  });

  const taskTitles = async (server: ServerProcess, token: string | null): Promise<string[]> =>
    ((await new HttpClient(server.url, token).ok('GET', '/hecate/v1/tasks?limit=200')) as { title: string }[]).map((t) => t.title);

  /** The three bodies an HTML <form> can send, each carrying the given fields. */
  const forms = (fields: Record<string, string>): { enctype: string; body: string }[] => {
    const boundary = '----hecateFormBoundary7MA4YWxk';
    return [
      { enctype: 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() },
      // enctype="text/plain": `name=value` lines; the classic trick makes the whole body JSON.
      { enctype: 'text/plain', body: `${JSON.stringify({ ...fields, pad: '' }).slice(0, -2)}=` + '"}' },
      {
        enctype: `multipart/form-data; boundary=${boundary}`,
        body:
          Object.entries(fields)
            .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
            .join('') + `--${boundary}--\r\n`,
      },
    ];
  };
  /**
   * What a browser sends with a cross-site form submission: Origin and fetch metadata; fetch metadata alone (as for a
   * page's <img> or link); or neither (an old browser, or a setup that strips both).
   */
  const crossSite = (sender: 'origin' | 'fetch-metadata' | 'bare'): Record<string, string> => ({
    ...(sender === 'origin' ? { origin: 'https://evil.example' } : {}),
    ...(sender === 'bare'
      ? {}
      : { referer: 'https://evil.example/page.html', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }),
  });
  const refusedAs = (r: RawResponse) => ({ status: r.status, type: r.body.error?.type });

  it('refuses cross-site form posts to the MCP probe and to task routes: nothing is probed, created or started (no token)', async () => {
    const legit = await rawRequest(local.url, {
      method: 'POST',
      path: '/hecate/v1/tasks',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'legit', execution_kind: 'shell', shell_command: 'true' }),
    });
    expect(legit.status).toBe(200);
    const taskId = (legit.body.data as { id: string }).id;

    const targets: { path: string; fields: Record<string, string> }[] = [
      { path: '/hecate/v1/mcp/probe', fields: { name: 'x', url: listenerUrl } },
      { path: '/hecate/v1/tasks', fields: { title: 'from-a-form', execution_kind: 'shell', shell_command: 'touch /tmp/hecate-form-pwned' } },
      { path: `/hecate/v1/tasks/${taskId}/start`, fields: { go: '1' } },
    ];
    let attacks = 0;
    for (const target of targets) {
      for (const form of [...forms(target.fields), { enctype: 'application/x-www-form-urlencoded', body: '' }]) {
        for (const sender of ['origin', 'fetch-metadata', 'bare'] as const) {
          const r = await rawRequest(local.url, {
            method: 'POST',
            path: target.path,
            headers: { ...crossSite(sender), 'content-type': form.enctype },
            body: form.body,
          });
          attacks += 1;
          expect({ target: target.path, enctype: form.enctype, sender, ...refusedAs(r) }).toEqual({
            target: target.path,
            enctype: form.enctype,
            sender,
            ...(sender === 'bare' ? { status: 415, type: 'unsupported_media_type' } : { status: 403, type: 'origin_not_allowed' }),
          });
        }
      }
    }
    // A no-cors fetch() from the page: a POST without a body or a Content-Type, only its Origin gives it away.
    const bare = await rawRequest(local.url, { method: 'POST', path: `/hecate/v1/tasks/${taskId}/start`, headers: { origin: 'https://evil.example' } });
    attacks += 1;
    expect(refusedAs(bare)).toEqual({ status: 403, type: 'origin_not_allowed' });
    // A page's <img> GET that would make the local operator start an adapter: no Origin, only fetch metadata.
    const img = await rawRequest(local.url, {
      path: '/hecate/v1/agent-adapters/codex/health',
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image', referer: 'https://evil.example/' },
    });
    attacks += 1;
    expect(refusedAs(img)).toEqual({ status: 403, type: 'origin_not_allowed' });
    expect(attacks).toBe(38);

    expect(hits).toBe(0);
    expect(await taskTitles(local, null)).toEqual(['legit']);
    expect(await new HttpClient(local.url, null).ok('GET', `/hecate/v1/tasks/${taskId}/runs`)).toEqual([]);
    // The marker works: the same probe sent as JSON by a local client does reach the server it names.
    await rawRequest(local.url, {
      method: 'POST',
      path: '/hecate/v1/mcp/probe',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', url: listenerUrl }),
    });
    expect(hits).toBeGreaterThan(0);
    hits = 0;
  }, 60_000);

  it('refuses a DNS-rebound Host on every route but liveness (no token)', async () => {
    const hosts = [
      'evil.example',
      `attacker.test:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `localtest.me:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1.evil.example`,
      `0.0.0.0:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `devbox.test.evil.example:${port}`,
      `evil.example@127.0.0.1:${port}`,
    ];
    const json = { 'content-type': 'application/json' };
    const routes: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
      { method: 'GET', path: '/hecate/v1/tasks' },
      { method: 'GET', path: '/hecate/v1/api-keys' },
      { method: 'GET', path: '/v1/models' },
      { method: 'GET', path: '/metrics' },
      { method: 'GET', path: '/hecate/v1/events/stream' },
      { method: 'POST', path: '/hecate/v1/tasks', headers: json, body: JSON.stringify({ title: 'rebound', execution_kind: 'shell', shell_command: 'true' }) },
      { method: 'POST', path: '/hecate/v1/mcp/probe', headers: json, body: JSON.stringify({ name: 'x', url: listenerUrl }) },
      { method: 'POST', path: '/v1/chat/completions', headers: json, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) },
      {
        method: 'POST',
        path: '/mcp',
        headers: { ...json, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_task', arguments: { title: 'rebound-mcp' } } }),
      },
    ];
    let attacks = 0;
    for (const host of hosts) {
      for (const route of routes) {
        // The rebound page is same-origin with itself: it sends its own name in Origin too (or none, for a GET).
        const origin: Record<string, string> = route.method === 'POST' ? { origin: `http://${host}` } : {};
        const r = await rawRequest(local.url, { method: route.method, path: route.path, headers: { ...route.headers, ...origin, host }, body: route.body });
        attacks += 1;
        expect({ host, route: route.path, ...refusedAs(r) }).toEqual({ host, route: route.path, status: 403, type: 'host_not_allowed' });
      }
    }
    expect(attacks).toBe(90);
    expect(hits).toBe(0);
    expect((await taskTitles(local, null)).filter((t) => t.startsWith('rebound'))).toEqual([]);

    // Liveness and readiness answer whatever the Host (a probe dials an address, not a name): they carry no data.
    for (const path of ['/healthz', '/readyz']) {
      const started = Date.now();
      const r = await rawRequest(local.url, { path, headers: { host: 'evil.example' } });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  }, 60_000);

  it('refuses a foreign Origin even with a loopback Host (no token)', async () => {
    const origins = [
      'https://evil.example',
      `http://evil.example:${port}`,
      'null',
      'http://localhost:6274',
      `http://127.0.0.1:${port + 1}`,
      'file://',
      'chrome-extension://abcdef',
    ];
    let attacks = 0;
    for (const origin of origins) {
      for (const req of [
        { method: 'GET', path: '/hecate/v1/tasks' },
        { method: 'POST', path: '/hecate/v1/tasks', body: JSON.stringify({ title: 'cross-origin', execution_kind: 'shell', shell_command: 'true' }) },
      ]) {
        const r = await rawRequest(local.url, { ...req, headers: { origin, ...(req.body ? { 'content-type': 'application/json' } : {}) } });
        attacks += 1;
        expect({ origin, method: req.method, ...refusedAs(r) }).toEqual({ origin, method: req.method, status: 403, type: 'origin_not_allowed' });
      }
    }
    expect(attacks).toBe(14);
    expect((await taskTitles(local, null)).filter((t) => t === 'cross-origin')).toEqual([]);

    // Refused before the body is read: a 10 MB declared body, a few bytes sent, the answer comes at once.
    const early = await answerBeforeBody(local.url, {
      method: 'POST',
      path: '/hecate/v1/mcp/probe',
      headers: { origin: 'https://evil.example' },
      declaredLength: 10 * 1024 * 1024,
      sent: '{"name":"x","url":',
    });
    expect({ status: early.status, type: (JSON.parse(early.body) as { error: { type: string } }).error.type }).toEqual({
      status: 403,
      type: 'origin_not_allowed',
    });
  });

  it("this session's routes sit behind the same wall: saved agents, input optimisation, workspace-dialog refuse a foreign Origin, a rebound Host and a form body, and nothing is created (no token)", async () => {
    const json = { 'content-type': 'application/json' };
    const agentName = `walled-${randomUUID()}`;
    const routes = [
      { method: 'POST', path: '/hecate/v1/agents', body: JSON.stringify({ name: agentName, model: 'gpt-4o-mini' }) },
      { method: 'GET', path: '/hecate/v1/agents' },
      { method: 'POST', path: '/hecate/v1/agent-chat/optimize-input', body: JSON.stringify({ current_input: 'hi', model: 'gpt-4o-mini' }) },
      { method: 'POST', path: '/hecate/v1/agent-chat/optimize-input/stream', body: JSON.stringify({ current_input: 'hi', model: 'gpt-4o-mini' }) },
      { method: 'POST', path: '/hecate/v1/workspace-dialog', body: '{}' },
    ];
    const seen: string[] = [];
    for (const r of routes) {
      const headers = r.body ? json : {};
      const fromPage = await rawRequest(local.url, { ...r, headers: { ...headers, origin: 'https://evil.example' } });
      const rebound = await rawRequest(local.url, { ...r, headers: { ...headers, host: `evil.example:${port}` } });
      seen.push(`${r.method} ${r.path}: ${refusedAs(fromPage).status} ${refusedAs(fromPage).type} / ${refusedAs(rebound).status} ${refusedAs(rebound).type}`);
      if (r.body) {
        const form = await rawRequest(local.url, { ...r, headers: { 'content-type': 'text/plain' } });
        expect({ path: r.path, ...refusedAs(form) }).toEqual({ path: r.path, status: 415, type: 'unsupported_media_type' });
      }
    }
    expect(seen).toEqual(routes.map((r) => `${r.method} ${r.path}: 403 origin_not_allowed / 403 host_not_allowed`));
    // The local operator sees no agent made by any of them.
    const agents = (await new HttpClient(local.url, null).ok('GET', '/hecate/v1/agents?limit=200')) as { name: string }[];
    expect(agents.filter((a) => a.name === agentName)).toEqual([]);
    // With a token configured, no credential is 401 on each of them; a forged one too.
    for (const r of routes) {
      for (const auth of [{}, { authorization: 'Bearer hk_forged_0123456789' }] as Record<string, string>[]) {
        const anonymous = await rawRequest(secured.url, { ...r, headers: { ...(r.body ? json : {}), ...auth } });
        expect({ path: r.path, status: anonymous.status }).toEqual({ path: r.path, status: 401 });
      }
    }
  });

  it("the console's routes sit behind the same wall in loopback mode: whoami, usage/series and a provider's models refuse a foreign Origin and a rebound Host, while the local operator reads them (no token)", async () => {
    const operator = new HttpClient(local.url, null);
    const routes = [
      { method: 'GET', path: '/hecate/v1/whoami' },
      { method: 'GET', path: '/hecate/v1/usage/series?bucket=hour&group_by=provider' },
      { method: 'GET', path: '/hecate/v1/providers/unconfigured/models' },
    ];
    const seen: string[] = [];
    for (const r of routes) {
      const fromPage = await rawRequest(local.url, { ...r, headers: { origin: 'https://evil.example' } });
      const rebound = await rawRequest(local.url, { ...r, headers: { host: `evil.example:${port}` } });
      const dnsRebound = await rawRequest(local.url, { ...r, headers: { host: `evil.example@127.0.0.1:${port}` } });
      seen.push(
        `${r.path}: ${refusedAs(fromPage).status} ${refusedAs(fromPage).type} / ${refusedAs(rebound).status} ${refusedAs(rebound).type} / ${refusedAs(dnsRebound).type}`,
      );
    }
    expect(seen).toEqual(routes.map((r) => `${r.path}: 403 origin_not_allowed / 403 host_not_allowed / host_not_allowed`));
    // The wall is what refused them: the local operator's own requests are answered.
    expect(await operator.ok('GET', '/hecate/v1/whoami')).toMatchObject({ kind: 'local_operator' });
    expect((await rawRequest(local.url, routes[1])).status).toBe(200);
    // This server has no provider: the route itself answers (its 404), not the wall.
    expect(refusedAs(await rawRequest(local.url, routes[2]))).toEqual({ status: 404, type: 'not_found' });
  });

  it('still answers local clients: loopback names, the own origin, allowlisted names and origins, JSON with a charset (no token)', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `127.0.0.1`, 'LOCALHOST', `127.5.6.7:${port}`, `devbox.test:${port}`]) {
      const r = await rawRequest(local.url, { path: '/hecate/v1/tasks', headers: { host } });
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
    }
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'http://console.test:3000']) {
      const r = await rawRequest(local.url, {
        method: 'POST',
        path: '/hecate/v1/tasks',
        headers: { origin, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ title: `ok-${origin}`, execution_kind: 'shell', shell_command: 'true' }),
      });
      expect({ origin, status: r.status }).toEqual({ origin, status: 200 });
    }
    const mcp = await rawRequest(local.url, {
      method: 'POST',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', origin: `http://localhost:${port}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(200);
    const stream = await rawRequest(local.url, { path: '/hecate/v1/events/stream', headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
  });

  it('with a token: Host is not checked, a foreign Origin still is, and only JSON bodies are parsed', async () => {
    const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    const proxied = await rawRequest(secured.url, { path: '/hecate/v1/tasks', headers: { ...auth, host: 'hecate.internal.example' } });
    expect(proxied.status).toBe(200);
    const sameOrigin = await rawRequest(secured.url, { path: '/hecate/v1/tasks', headers: { ...auth, host: 'api.example', origin: 'https://api.example' } });
    expect(sameOrigin.status).toBe(200);

    let attacks = 0;
    for (const origin of ['https://evil.example', `http://127.0.0.1:${secured.port + 1}`, 'null']) {
      const r = await rawRequest(secured.url, {
        method: 'POST',
        path: '/hecate/v1/tasks',
        headers: { ...auth, origin, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'token-cross-origin', execution_kind: 'shell', shell_command: 'true' }),
      });
      attacks += 1;
      expect({ origin, ...refusedAs(r) }).toEqual({ origin, status: 403, type: 'origin_not_allowed' });
    }
    for (const form of forms({ title: 'token-form', execution_kind: 'shell', shell_command: 'true' })) {
      const r = await rawRequest(secured.url, {
        method: 'POST',
        path: '/hecate/v1/tasks',
        headers: { ...auth, 'content-type': form.enctype },
        body: form.body,
      });
      attacks += 1;
      expect({ enctype: form.enctype, ...refusedAs(r) }).toEqual({ enctype: form.enctype, status: 415, type: 'unsupported_media_type' });
    }
    const noType = await rawRequest(secured.url, { method: 'POST', path: '/hecate/v1/tasks', headers: auth, body: '{"title":"token-untyped"}' });
    attacks += 1;
    expect(refusedAs(noType)).toEqual({ status: 415, type: 'unsupported_media_type' });
    expect(attacks).toBe(7);
    expect((await taskTitles(secured, OPERATOR_TOKEN)).filter((t) => t.startsWith('token-'))).toEqual([]);
  });
});
