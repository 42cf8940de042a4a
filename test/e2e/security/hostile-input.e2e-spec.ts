import { scaledStackEnv } from '../../support/harness';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Client } from 'pg';
import { HttpClient, request } from '../../support/http';
import { ScratchDatabase, waitFor } from '../../support/infra';
import { type ServerProcess, startServer } from '../../support/server-process';
import { chatBody, completions, createKey, errorType, FakeUpstream, OPERATOR_TOKEN, providerEnv, startFakeUpstream, startSecured } from './security-harness';

const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

/** An upstream that answers every completion with a redirect (and lists one model so routing accepts it). */
async function redirectingUpstream(): Promise<{ url: string; posts: () => number; close(): Promise<void> }> {
  let posts = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'redirected-model', object: 'model', owned_by: 'x' }] }));
    }
    posts++;
    res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere', 'content-type': 'text/html' });
    res.end('<html>moved: data: {"choices":[]}</html>');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    posts: () => posts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('hostile input (embedded): deep JSON, NUL characters, upstream redirects', () => {
  let upstream: FakeUpstream;
  let redirector: Awaited<ReturnType<typeof redirectingUpstream>>;
  let server: ServerProcess;
  let operator: HttpClient;

  beforeAll(async () => {
    [upstream, redirector] = await Promise.all([startFakeUpstream(), redirectingUpstream()]);
    server = await startSecured({
      ...providerEnv('solo', upstream, { kind: 'local' }),
      ...providerEnv('redirector', redirector, { kind: 'local' }),
      GATEWAY_PROVIDER_HEALTH_FAILURE_THRESHOLD: '2',
      GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
    });
    operator = new HttpClient(server.url, OPERATOR_TOKEN);
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await server?.stop();
    await Promise.all([upstream?.close(), redirector?.close()]);
  });

  it("answers deeply nested JSON 400 on /v1 and /hecate/v1, and it never counts against the provider's health", async () => {
    const attacker = await createKey(server.url, ['inference', 'operator'], 'attacker');
    const bystander = await createKey(server.url, ['inference'], 'bystander');
    const nested = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":${deep(100_000)}}`;
    const hostile = [
      await request(server.url, 'POST', '/v1/chat/completions', { token: attacker.secret, rawBody: nested }),
      await request(server.url, 'POST', '/v1/chat/completions', { token: attacker.secret, rawBody: nested.replace('"x"}]', `"x"}],"stream":true`) }),
      await request(server.url, 'POST', '/v1/messages', { token: attacker.secret, rawBody: nested.replace('"metadata"', '"max_tokens":5,"metadata"') }),
      await request(server.url, 'POST', '/hecate/v1/chat/sessions', { token: attacker.secret, rawBody: `{"title":${deep(100_000)}}` }),
      await request(server.url, 'POST', '/v1/chat/completions', { token: attacker.secret, rawBody: `{"messages":${deep(129)}}` }),
    ];
    expect(hostile.map((r) => [r.status, errorType(r)])).toEqual(hostile.map(() => [400, 'invalid_request']));
    expect(hostile[0].body.error.message).toMatch(/deeper than 128/);
    // 128 levels (the outer object and 127 arrays) are still accepted JSON (the gateway checks the shape it needs and answers its own 400).
    const shallow = await request(server.url, 'POST', '/v1/chat/completions', { token: attacker.secret, rawBody: `{"messages":${deep(127)}}` });
    expect(shallow.status).toBe(400);
    expect(shallow.body.error.param).toBe('messages[0].role');
    expect(completions(upstream)).toBe(0);

    // Requests the upstream refuses for their content (4xx) are the client's fault too.
    upstream.script({ status: 400, times: 3 });
    for (let i = 0; i < 3; i++) expect((await attacker.client.call('POST', '/v1/chat/completions', chatBody('bad'))).status).toBe(400);

    const normal = await bystander.client.call('POST', '/v1/chat/completions', chatBody('hello'));
    expect(normal.status).toBe(200);
    expect(normal.body.choices[0].message.content).toBe('echo: hello');
    const status = await operator.ok<Array<{ name: string; routing_ready: boolean; health?: { circuit?: string } }>>('GET', '/hecate/v1/providers/status');
    expect(status.find((p) => p.name === 'solo')).toMatchObject({ routing_ready: true });
  });

  it('answers a NUL character in a JSON field, a path id or a query value 400, naming where it is', async () => {
    const inBody = await operator.call('POST', '/hecate/v1/chat/sessions', { title: 'a\u0000b' });
    expect(inBody.status).toBe(400);
    expect(inBody.body.error).toMatchObject({ type: 'invalid_request', param: 'title', user_message: expect.any(String) });

    const inMessage = await operator.call('POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x\u0000' }] });
    expect(inMessage.status).toBe(400);
    expect(inMessage.body.error).toMatchObject({ type: 'invalid_request', param: 'messages[0].content' });

    const inPath = await operator.call('GET', '/hecate/v1/tasks/a%00b');
    expect(inPath.status).toBe(400);
    expect(inPath.body.error).toMatchObject({ type: 'invalid_request', param: 'path' });

    const inQuery = await operator.call('GET', '/hecate/v1/usage/events?provider=a%00b');
    expect(inQuery.status).toBe(400);
    expect(inQuery.body.error).toMatchObject({ type: 'invalid_request', param: 'provider' });

    const session = await operator.call('POST', '/hecate/v1/chat/sessions', { title: 'fine' });
    expect(session.status).toBe(201);
    expect(completions(upstream)).toBe(0);
  });

  it('answers an upstream redirect 502 upstream_error, streaming or not, without relaying its body', async () => {
    for (const stream of [false, true]) {
      const r = await operator.call('POST', '/v1/chat/completions', {
        provider: 'redirector',
        model: 'redirected-model',
        stream,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(r.status).toBe(502);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(r.body.error).toMatchObject({ type: 'upstream_error', request_id: expect.any(String) });
      expect(r.text).not.toContain('moved');
    }
    expect(redirector.posts()).toBe(2);
  });
});

describe('hostile conditions (scaled): Postgres backends terminated under load', () => {
  let db: ScratchDatabase;
  let api: ServerProcess;

  beforeAll(async () => {
    let env: Record<string, string>;
    ({ env, db } = await scaledStackEnv({ token: OPERATOR_TOKEN, env: { GATEWAY_DB_POOL_SIZE: '4' } }));
    api = await startServer('api', env);
  });
  afterAll(async () => {
    await api?.stop('SIGKILL');
    await db?.drop();
  });

  it('answers 2xx or 503 with Retry-After, never 500, while its connections are killed, and recovers', async () => {
    const client = new HttpClient(api.url, OPERATOR_TOKEN);
    const killer = new Client({ connectionString: db.url });
    await killer.connect();
    let killing = true;
    let killed = 0;
    const loop = (async () => {
      while (killing) {
        const r = await killer.query(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        killed += (r.rows[0] as { n: number }).n;
        await new Promise((res) => setTimeout(res, 5));
      }
    })();
    const answers: Array<{ status: number; type?: string; retryAfter: string | null; error?: string }> = [];
    // A dropped connection is recorded (status 0), not thrown: the assertion below shows every odd answer at once.
    const call = (method: string, path: string, body?: unknown) =>
      client.call(method, path, body).then(
        (r) => ({ status: r.status, type: errorType(r), retryAfter: r.headers.get('retry-after') }),
        (err: unknown) => ({ status: 0, retryAfter: null, error: String((err as { cause?: unknown }).cause ?? err) }),
      );
    try {
      for (let round = 0; round < 20; round++) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            i % 2 === 0 ? call('POST', '/hecate/v1/chat/sessions', { title: `s${round}-${i}` }) : call('GET', '/hecate/v1/chat/sessions?limit=5'),
          ),
        );
        answers.push(...batch);
      }
    } finally {
      killing = false;
      await loop;
      await killer.end();
    }
    expect(answers).toHaveLength(200);
    expect(killed).toBeGreaterThan(0);
    const unexpected = answers.filter((a) => !(a.status >= 200 && a.status < 300) && a.status !== 503);
    expect(unexpected).toEqual([]);
    for (const a of answers.filter((x) => x.status === 503))
      expect(a).toMatchObject({ type: 'service_unavailable', retryAfter: expect.stringMatching(/^\d+$/) });

    expect((await request(api.url, 'GET', '/healthz')).status).toBe(200);
    await waitFor(async () => (await request(api.url, 'GET', '/readyz')).status === 200, { what: 'readiness after the storm' });
    expect((await client.call('POST', '/hecate/v1/chat/sessions', { title: 'after' })).status).toBe(201);
  });
});
