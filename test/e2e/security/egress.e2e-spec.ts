import { createServer, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream';
import type { ScratchDatabase } from '../../support/infra';
import { MCP_SANDBOX_READ_PATHS } from '../../support/mcp-servers';
import { providerEnv } from '../../support/provider-env';
import { describeWithBwrap } from '../../support/sandbox';
import { freePort, startServer, type ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, scaledEnv } from '../tasks/tasks-harness';

/**
 * Issue 26, "ungated commands with network": a sandboxed command granted network (a shell task, an MCP stdio server,
 * an adapter) has its own network namespace and reaches the world only through the worker's egress proxy, which applies
 * the outbound policy after DNS and never opens the server's own API, health, Postgres or Redis ports — even with
 * private addresses allowed. Every attack below succeeded on main (the command shared the host's network).
 */

const PROBER = join(__dirname, '../../support/mcp/egress-prober.mjs');
const ALLOWED_BODY = 'egress-ok-from-the-allowed-upstream';

async function allowedUpstream(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end(ALLOWED_BODY);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, hits: () => hits };
}

/** A shell task with network that runs `lines` (each `name|command`), printing `name => output` per line. */
async function shellProbe(c: Client, lines: Array<[string, string]>): Promise<Map<string, string>> {
  const script = lines.map(([name, cmd]) => `printf '%s => %s\\n' '${name}' "$( (${cmd}) 2>&1 | tail -c 4000 | tr '\\n\\r' '  ')"`).join('\n');
  const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: script, sandbox_network: true });
  const run = await c.waitStatus(taskId, runId, ['completed', 'failed'], 120_000);
  const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
  const stdout = artifacts.find((a) => a.kind === 'stdout');
  const text = stdout ? ((await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts/${stdout.id}`)).content_text as string) : '';
  if (run.status !== 'completed') throw new Error(`probe task ${run.status}: ${JSON.stringify(run.last_error)}\n${text}`);
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf(' => ');
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 4).trim());
  }
  expect([...out.keys()].sort()).toEqual(lines.map(([n]) => n).sort());
  return out;
}

const curl = (url: string, extra = '') => `curl -sS -m 5 ${extra} -w ' HTTP %{http_code}' ${url}`;
/** Each refused attempt and what it answered, for a failure message that shows every hole at once. */
const holes = (out: Map<string, string>, names: string[], refused: RegExp) =>
  names.filter((n) => !refused.test(out.get(n) ?? '')).map((n) => `${n} => ${out.get(n)}`);

describeWithBwrap('sandbox egress: scaled worker beside its Postgres and Redis, private addresses allowed', () => {
  let db: ScratchDatabase;
  let upstream: FakeUpstream;
  let allowed: Awaited<ReturnType<typeof allowedUpstream>>;
  /** A host service the operator listed in GATEWAY_TASK_SANDBOX_EGRESS_DENY (the api of a scaled deployment, say). */
  let denied: Awaited<ReturnType<typeof allowedUpstream>>;
  let api: ServerProcess;
  let worker: ServerProcess;
  let c: Client;
  let apiPort: number;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    allowed = await allowedUpstream();
    denied = await allowedUpstream();
    const s = await scaledEnv({
      GATEWAY_TASK_SANDBOX_EGRESS_DENY: `localhost:${denied.port}`,
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
      GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
      // An MCP stdio server has network only by its allowlist entry's grant (the task's sandbox_network is not one).
      GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: `${PROBER.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} .+`, network: true }]),
    });
    db = s.db;
    apiPort = await freePort();
    // One configuration for both roles (as a compose file or a Helm chart gives them): the worker knows the api's port.
    [api, worker] = await Promise.all([
      startServer('api', s.env, { port: apiPort, timeoutMs: 60_000 }),
      startServer('worker', { ...s.env, PORT: String(apiPort) }, { timeoutMs: 60_000 }),
    ]);
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([api?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
    await upstream?.close();
    allowed?.server.close();
    denied?.server.close();
    await db?.drop();
  });

  it("a shell task's CONNECT and plain-HTTP requests to Redis, Postgres, the API and the worker's health port are refused on every local spelling; direct connections find nothing; the allowed upstream answers", async () => {
    const iface = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
    const hosts = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '127.1.2.3', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[64:ff9b::7f00:1]'];
    if (iface) hosts.push(iface);
    const ports: Record<string, number> = { redis: 6379, postgres: 5432, api: apiPort, health: worker.port };
    const tunnel: Array<[string, string]> = [];
    const plain: Array<[string, string]> = [];
    for (const h of hosts)
      for (const [what, port] of Object.entries(ports)) {
        tunnel.push([`connect ${what} ${h}`, curl(`http://${h}:${port}/`, '-p')]);
        plain.push([`plain ${what} ${h}`, curl(`http://${h}:${port}/`)]);
      }
    const direct: Array<[string, string]> = Object.entries(ports).map(([what, port]) => [`direct ${what}`, curl(`http://127.0.0.1:${port}/`, "--noproxy '*'")]);
    const metadata: Array<[string, string]> = [
      ['metadata v4', curl('http://169.254.169.254/latest/meta-data/')],
      ['metadata mapped', curl('http://[::ffff:a9fe:a9fe]/latest/meta-data/')],
      ['metadata nat64', curl('http://[64:ff9b::a9fe:a9fe]/latest/meta-data/')],
      ['denied by name', curl(`http://localhost:${denied.port}/`)],
      ['denied by address', curl(`http://127.0.0.1:${denied.port}/`)],
      ['denied mapped', curl(`http://[::ffff:7f00:1]:${denied.port}/`)],
    ];
    const good: Array<[string, string]> = [
      ['allowed plain', curl(`http://127.0.0.1:${allowed.port}/`)],
      ['allowed connect', curl(`http://127.0.0.1:${allowed.port}/`, '-p')],
    ];
    const out = await shellProbe(c, [...tunnel, ...plain, ...direct, ...metadata, ...good]);

    expect(
      holes(
        out,
        tunnel.map(([n]) => n),
        /CONNECT tunnel failed, response 403/,
      ),
    ).toEqual([]);
    expect(
      holes(
        out,
        [...plain, ...metadata].map(([n]) => n),
        /refused.* HTTP 403$/,
      ),
    ).toEqual([]);
    expect(
      holes(
        out,
        direct.map(([n]) => n),
        /Failed to connect|Couldn't connect/,
      ),
    ).toEqual([]);
    expect(out.get('allowed plain')).toBe(`${ALLOWED_BODY} HTTP 200`);
    expect(out.get('allowed connect')).toBe(`${ALLOWED_BODY} HTTP 200`);
    // 9-10 local spellings × 4 ports × 2 request forms, 4 direct, 3 metadata, 3 denied.
    expect(tunnel.length + plain.length + direct.length + metadata.length).toBeGreaterThanOrEqual(82);
  }, 180_000);

  it('an MCP stdio server with network sends Redis PING, a Postgres startup and an API request: all refused; its fetch of the allowed upstream works through the proxy', async () => {
    const redisPing = 'PING\r\n';
    const pgStartup = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]).toString('latin1'); // SSLRequest
    const targets = [
      ...['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1'].map((host) => ({
        name: `redis proxy ${host}`,
        via: 'proxy',
        host,
        port: 6379,
        send: redisPing,
      })),
      { name: 'redis direct', via: 'direct', host: '127.0.0.1', port: 6379, send: redisPing },
      { name: 'postgres proxy', via: 'proxy', host: '127.0.0.1', port: 5432, send: pgStartup },
      { name: 'postgres direct', via: 'direct', host: '127.0.0.1', port: 5432, send: pgStartup },
      { name: 'api proxy', via: 'proxy', host: '127.0.0.1', port: apiPort, send: 'GET /hecate/v1/tasks HTTP/1.0\r\n\r\n' },
      { name: 'api fetch', via: 'fetch', url: `http://127.0.0.1:${apiPort}/hecate/v1/tasks` },
      { name: 'allowed fetch', via: 'fetch', url: `http://127.0.0.1:${allowed.port}/` },
    ];
    upstream.reset();
    upstream.script({ content: 'Nothing to do.' });
    const { taskId, runId } = await c.startTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'report',
      sandbox_network: true,
      mcp_servers: [{ name: 'prober', command: process.execPath, args: [PROBER, JSON.stringify(targets)] }],
    });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed'], 60_000);
    expect(run.status).toBe('completed');
    const request = upstream.requests.find((r) => r.path === '/v1/chat/completions')!;
    const tool = ((request.body as Json).tools as Json[]).find((t) => t.function.name === 'mcp__prober__report')!;
    const results = JSON.parse(tool.function.description as string) as Record<string, string>;
    const refused = Object.entries(results).filter(([name]) => name !== 'allowed fetch');
    expect(refused.filter(([, r]) => !r.startsWith('refused:'))).toEqual([]);
    // Node's fetch tunnels plain HTTP through the proxy too: the tunnel is refused.
    expect(results['api fetch']).toMatch(/^refused: .*Proxy response \(403\)/);
    expect(results['allowed fetch']).toBe(`status 200: ${ALLOWED_BODY}`);
    expect(results['redis direct']).toBe('refused: ECONNREFUSED');
  }, 90_000);
});

describeWithBwrap('sandbox egress: embedded server without a token (loopback operator), default outbound policy', () => {
  let upstream: FakeUpstream;
  let allowed: Awaited<ReturnType<typeof allowedUpstream>>;
  let server: ServerProcess;
  let c: Client;
  let tenantKey: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    allowed = await allowedUpstream();
    server = await startServer(
      'all',
      embeddedTasksEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_AUTH_TOKEN: '',
        GATEWAY_TASK_APPROVAL_POLICIES: 'none',
        // An IPv4-mapped spelling of the fake upstream's loopback address, as a cloud provider.
        PROVIDER_MAPPED_BASE_URL: `${upstream.url.replace('127.0.0.1', '[::ffff:7f00:1]')}/v1`,
        PROVIDER_MAPPED_API_KEY: 'sk-mapped',
        PROVIDER_MAPPED_DEFAULT_MODEL: 'mapped-model',
      }),
      { timeoutMs: 60_000 },
    );
    c = new Client(server.url, '');
    const key = await c.ok('POST', '/hecate/v1/api-keys', { name: 'tenant', scopes: ['inference'], tenant_id: 'tenant-egress' });
    tenantKey = key.secret as string;
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await upstream?.close();
    allowed?.server.close();
  });

  it("through the proxy or on the gateway's own port inside the sandbox, a command reaches only /v1 with a valid key — never the operator API, never as the local operator", async () => {
    const port = server.port;
    const both = (name: string, path: string, extra = ''): Array<[string, string]> => [
      [`${name} proxied`, curl(`http://127.0.0.1:${port}${path}`, extra)],
      [`${name} forwarded`, curl(`http://127.0.0.1:${port}${path}`, `--noproxy '*' ${extra}`)],
    ];
    const operator = [
      ...both('list tasks', '/hecate/v1/tasks'),
      ...both('mint admin key', '/hecate/v1/api-keys', `-X POST -H 'content-type: application/json' -d '{"name":"x","scopes":["admin"]}'`),
      ...both('health', '/healthz'),
      ...both('list tasks forged relay', '/hecate/v1/tasks', "-H 'x-hecate-sandbox-relay: 0'"),
      ['list tasks localhost', curl(`http://localhost:${port}/hecate/v1/tasks`)],
      ['list tasks tunnel', curl(`http://127.0.0.1:${port}/hecate/v1/tasks`, '-p')],
    ] as Array<[string, string]>;
    const noKey: Array<[string, string]> = [
      ...both('models without key', '/v1/models'),
      ['models tunnel without key', curl(`http://127.0.0.1:${port}/v1/models`, '-p')],
    ];
    const forged = [
      ...both('models forged key', '/v1/models', "-H 'authorization: Bearer hk_forged_0123456789'"),
      ...both('models operator-looking key', '/v1/models', "-H 'x-api-key: anything'"),
    ];
    const valid = both('models tenant key', '/v1/models', `-H 'authorization: Bearer ${tenantKey}'`);
    // Node's fetch tunnels plain HTTP (CONNECT): the tunnel to this server's ingress gets the same rules.
    const nodeFetch = (path: string, key: string) =>
      `${process.execPath} -e 'fetch("http://127.0.0.1:${port}${path}", { headers: { authorization: "Bearer ${key}" } }).then((r) => console.log("HTTP " + r.status))'`;
    const viaNode: Array<[string, string]> = [
      ['node tasks', nodeFetch('/hecate/v1/tasks', tenantKey)],
      ['node forged', nodeFetch('/v1/models', 'hk_forged_0123456789')],
      ['node tenant key', nodeFetch('/v1/models', tenantKey)],
    ];
    const out = await shellProbe(c, [...operator, ...noKey, ...forged, ...valid, ...viaNode]);
    expect([out.get('node tasks'), out.get('node forged'), out.get('node tenant key')]).toEqual(['HTTP 403', 'HTTP 401', 'HTTP 200']);
    expect(
      holes(
        out,
        operator.map(([n]) => n),
        /(refused|not an inference route|reach only its \/v1).* HTTP 403$|response 403/,
      ),
    ).toEqual([]);
    expect(
      holes(
        out,
        noKey.map(([n]) => n),
        / HTTP 401$/,
      ),
    ).toEqual([]);
    expect(
      holes(
        out,
        forged.map(([n]) => n),
        /"type":"(authentication_error|unauthorized)".* HTTP 401$|HTTP 401$/,
      ),
    ).toEqual([]);
    for (const [n] of valid) expect(out.get(n)).toMatch(/"owned_by".* HTTP 200$/);
    // Still the operator for a caller outside any sandbox (no token configured): the wall is the relay, not the listener.
    expect((await c.call('GET', '/hecate/v1/tasks')).status).toBe(200);
  }, 120_000);

  it('with the default policy a sandboxed command reaches no loopback, private, metadata or embedded-IPv4 address', async () => {
    const before = allowed.hits();
    const lines: Array<[string, string]> = [
      ['loopback', curl(`http://127.0.0.1:${allowed.port}/`)],
      ['loopback connect', curl(`http://127.0.0.1:${allowed.port}/`, '-p')],
      ['mapped', curl(`http://[::ffff:7f00:1]:${allowed.port}/`)],
      ['nat64', curl(`http://[64:ff9b::7f00:1]:${allowed.port}/`)],
      ['compat', curl(`http://[::127.0.0.1]:${allowed.port}/`, '-p')],
      ['6to4', curl(`http://[2002:7f00:1::]:${allowed.port}/`)],
      ['private 10', curl('http://10.0.0.1/')],
      ['private 192', curl('http://192.168.0.1/', '-p')],
      ['metadata', curl('http://169.254.169.254/latest/meta-data/')],
      ['metadata mapped', curl('http://[::ffff:a9fe:a9fe]/latest/meta-data/')],
      ['metadata name', curl('http://metadata.google.internal/computeMetadata/v1/')],
    ];
    const out = await shellProbe(c, lines);
    expect(
      holes(
        out,
        lines.map(([n]) => n),
        / HTTP 403$|response 403/,
      ),
    ).toEqual([]);
    expect(allowed.hits()).toBe(before);
  }, 120_000);

  it('IPv6 literals that embed a loopback or metadata IPv4 address are refused as repo URLs and as a provider base URL', async () => {
    const repos = [
      `http://[::ffff:7f00:1]:${allowed.port}/repo.git`,
      `http://[::ffff:127.0.0.1]:${allowed.port}/repo.git`,
      `http://[64:ff9b::7f00:1]:${allowed.port}/repo.git`,
      `http://[::127.0.0.1]:${allowed.port}/repo.git`,
      `http://[::ffff:0:7f00:1]:${allowed.port}/repo.git`,
      `http://[2002:7f00:1::]:${allowed.port}/repo.git`,
      'http://[::ffff:a9fe:a9fe]/repo.git',
      'http://[64:ff9b::a9fe:a9fe]/repo.git',
      'http://[2001:0:808:808::5601:5601]/repo.git',
    ];
    for (const repo of repos) {
      const res = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'true', repo, sandbox_network: true });
      expect({ repo, status: res.status, type: res.body.error?.type }).toEqual({ repo, status: 400, type: expect.any(String) });
      expect(res.body.error.message).toMatch(/private or loopback|metadata|link-local/);
    }
    upstream.reset();
    const res = await c.call('POST', '/v1/chat/completions', { provider: 'mapped', model: 'mapped-model', messages: [{ role: 'user', content: 'hi' }] });
    // The static check marks the provider unhealthy (a private address for a cloud provider): nothing is sent.
    expect({ status: res.status, type: res.body.error.type, skip: res.body.error.candidates?.[0]?.skip_reason }).toEqual({
      status: 503,
      type: 'route_impossible',
      skip: 'provider_unhealthy',
    });
    expect(upstream.requests).toHaveLength(0);
  });
});
