import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueId, waitFor } from '../../support/infra';
import { EVERYTHING, HOSTILE, MCP_SANDBOX_READ_PATHS, MISBEHAVING, processesMatching } from '../../support/mcp-servers';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';
import { createKey, errorType, OPERATOR_TOKEN, providerEnv, startFakeUpstream, type FakeUpstream, type TenantKey } from './security-harness';

/**
 * Walls around MCP servers, played against a real embedded server (api and worker in one process), the
 * real sandbox and a hand-written hostile stdio MCP server: API keys start only operator-allowlisted commands, with no
 * network unless the entry grants it; `$VAR` reads only allowlisted variables; one huge stdout line fails the call,
 * not the process; a cached server is closed after the idle limit.
 */

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Operator secrets in the server's own environment: what a `$VAR` must never read. */
const OPERATOR_SECRETS: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-ant-operator-secret-0001',
  AWS_SECRET_ACCESS_KEY: 'aws-operator-secret-0002',
  PGPASSWORD: 'pg-operator-secret-0003',
  OPENAI_API_KEY: 'sk-openai-operator-secret-0004',
  GITHUB_TOKEN: 'ghp-operator-secret-0005',
};
const ALLOWED_SECRET = 'hecate-mcp-allowlisted-value-0006';
/** A scripted model's tool call, then its final answer. */
const toolThenAnswer = (u: FakeUpstream, name: string, args: Json) => {
  u.script({ toolCalls: [{ name, arguments: args }] });
  u.script({ content: 'done' });
};

describe('MCP walls (embedded, real sandbox)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let op: Client;
  let tenant: TenantKey;
  let t: Client;
  let bait: Server;
  let baitHits = 0;
  let baitUrl: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    bait = createServer((req, res) => {
      baitHits++;
      res.end();
    });
    await new Promise<void>((r) => bait.listen(0, '127.0.0.1', r));
    baitUrl = `http://127.0.0.1:${(bait.address() as { port: number }).port}/mcp`;
    server = await procs.start('all', {
      ...embeddedTasksEnv(),
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN,
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
      GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
      // The hostile server (with an optional tag argument) is allowlisted without network; nothing else is.
      GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: `${escape(HOSTILE)}( tag-[a-z0-9]+)?` }]),
      GATEWAY_MCP_IDLE_TIMEOUT: '2s',
      HECATE_MCP_SECRET_DEMO: ALLOWED_SECRET,
      ...OPERATOR_SECRETS,
    });
    op = new Client(server.url, OPERATOR_TOKEN);
    tenant = await createKey(server.url, ['operator'], 'acme');
    t = new Client(server.url, tenant.secret);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    await new Promise((r) => bait?.close(r));
  });
  beforeEach(() => upstream.reset());

  const agentTask = (servers: Json[], prompt = 'use the tools') => ({
    execution_kind: 'agent_loop',
    requested_model: 'gpt-4o-mini',
    prompt,
    mcp_servers: servers,
  });
  const hostile = (name = 'h', tag?: string) => ({ name, command: process.execPath, args: tag ? [HOSTILE, tag] : [HOSTILE] });
  /** The tool message the model got back for its (only) tool call. */
  const toolReply = () => {
    const chats = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    return ((chats.at(-1)!.body as Json).messages as Json[]).filter((m) => m.role === 'tool').at(-1) as Json;
  };
  const runToEnd = async (c: Client, dto: Json) => {
    const { taskId, runId } = await c.startTask(dto);
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 60_000);
    return { run, events: await c.events(taskId, runId) };
  };

  it('refuses every stdio server an API key names that the allowlist does not match (403 mcp.command_not_allowed naming it): nothing is stored or run', async () => {
    const marker = join(tmpdir(), uniqueId('mcp-wall-marker-'));
    const attacks: Json[] = [
      { name: 'sh', command: '/bin/sh', args: ['-c', `touch ${marker}`] },
      { name: 'node-e', command: process.execPath, args: ['-e', `require('fs').writeFileSync('${marker}', 'x')`] },
      { name: 'by-name', command: 'node', args: [HOSTILE] },
      { name: 'extra-arg', command: process.execPath, args: [HOSTILE, '--inspect'] },
      { name: 'prefix', command: process.execPath, args: [`${HOSTILE}.evil`] },
      { name: 'other-server', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      { name: 'tag-injection', command: process.execPath, args: [HOSTILE, 'tag-a; touch /tmp/x'] },
      { name: 'no-args', command: process.execPath },
      { name: 'bash', command: 'bash', args: ['-c', `echo > ${marker}`] },
    ];
    for (const attack of attacks) {
      const r = await t.call('POST', '/hecate/v1/tasks', agentTask([hostile('ok'), attack]));
      expect({ name: attack.name, status: r.status, type: errorType(r) }).toEqual({ name: attack.name, status: 403, type: 'mcp.command_not_allowed' });
      expect(r.body.error.servers).toEqual([attack.name]);
      expect(r.body.error.message).toContain(`"${attack.name}"`);
    }
    // A tenant's probe of an unlisted command is refused as well (403, whichever wall answers first).
    const probe = await t.call('POST', '/hecate/v1/mcp/probe', { command: '/bin/sh', args: ['-c', `touch ${marker}`] });
    expect(probe.status).toBe(403);
    expect((await t.ok<Json[]>('GET', '/hecate/v1/tasks')).length).toBe(0);
    // A fixed wait on purpose: it proves a negative (the refused command never ran to create the marker).
    await new Promise((r) => setTimeout(r, 500));
    expect(existsSync(marker)).toBe(false);
  });

  it('runs an allowlisted server for an API key, with no network: Redis, Postgres and the API port are unreachable from it', async () => {
    const apiPort = new URL(server.url).port;
    // Loopback targets only: no address off this machine is ever dialled, even if the wall regressed.
    const targets = ['127.0.0.1:6379', '127.0.0.1:5432', `127.0.0.1:${apiPort}`, `localhost:${apiPort}`, '::1:6379', `127.0.0.2:${apiPort}`];
    // Refused at once by the sandbox's own empty loopback (a time-out would prove nothing).
    const refusedAtOnce = /failed (ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL)$/;
    // The control: from outside the sandbox, Redis, Postgres and the api do answer.
    for (const target of targets.slice(0, 3)) {
      const [host, port] = target.split(':');
      await new Promise<void>((resolve, reject) => {
        const s = connect(Number(port), host, () => (s.destroy(), resolve()));
        s.once('error', reject);
      });
    }
    toolThenAnswer(upstream, 'mcp__h__connect', { targets });
    // The tenant asks for network for the task: that is the task's commands', not its MCP servers' to take.
    const { run, events } = await runToEnd(t, { ...agentTask([hostile()]), sandbox_network: true });
    expect(run.status).toBe('completed');
    expect(events.find((e) => e.type === 'tool.completed' && e.data.tool_name === 'mcp__h__connect')).toBeDefined();
    const lines = String(toolReply().content).split('\n');
    expect(lines).toHaveLength(targets.length);
    for (const line of lines) expect(line).toMatch(refusedAtOnce);
    // The probe (operator token) has no network either unless an entry grants it.
    const probe = await op.call('POST', '/hecate/v1/mcp/probe', { command: process.execPath, args: [HOSTILE, 'probe-connect', targets.slice(0, 3).join(',')] });
    expect(probe.status).toBe(200);
    const reached = String((probe.body.data.tools as Json[]).find((tool) => tool.name === 'reached')?.description);
    expect(reached.split('; ')).toHaveLength(3);
    for (const line of reached.split('; ')) expect(line).toMatch(refusedAtOnce);
  });

  it('lets the operator run a command that is not on the allowlist (still sandboxed)', async () => {
    toolThenAnswer(upstream, 'mcp__fixture__env', { name: 'ANTHROPIC_API_KEY' });
    const { run } = await runToEnd(op, agentTask([{ name: 'fixture', command: process.execPath, args: [MISBEHAVING] }]));
    expect(run.status).toBe('completed');
    // It ran, and even the operator's server does not inherit the server's environment.
    expect(toolReply().content).toBe('(unset)');
  });

  it('refuses $VAR references outside the allowlist in env and headers, for API keys, the operator and the probe; values never come back', async () => {
    const refs = [
      '$ANTHROPIC_API_KEY',
      '${AWS_SECRET_ACCESS_KEY}',
      '$PGPASSWORD',
      '${DATABASE_URL}',
      '$GATEWAY_AUTH_TOKEN',
      '$OPENAI_API_KEY',
      '$GITHUB_TOKEN',
      '$REDIS_URL',
      '$GATEWAY_SECRET_KEY',
      '$HOME',
      '$PATH',
      '$HECATE_OTHER',
    ];
    const seen: string[] = [];
    const tasksBefore = (await t.ok<Json[]>('GET', '/hecate/v1/tasks')).length;
    for (const ref of refs) {
      const variable = ref.replace(/[${}]/g, '');
      const entries = [
        { name: 'viaenv', command: process.execPath, args: [HOSTILE], env: { TOKEN: ref } },
        { name: 'viaheader', url: baitUrl, headers: { Authorization: ref } },
      ];
      for (const entry of entries) {
        for (const [who, c] of [
          ['tenant', t],
          ['operator', op],
        ] as const) {
          const r = await c.call('POST', '/hecate/v1/tasks', agentTask([entry]));
          expect({ ref, who, entry: entry.name, status: r.status, type: errorType(r) }).toMatchObject({
            status: 403,
            type: 'mcp.secret_reference_not_allowed',
          });
          expect(r.body.error.message).toContain(`$${variable}`);
          seen.push(r.text);
        }
        const { name: _n, ...probeBody } = entry;
        void _n;
        const p = await op.call('POST', '/hecate/v1/mcp/probe', probeBody);
        expect({ ref, probe: entry.name, status: p.status, type: errorType(p) }).toMatchObject({ status: 403, type: 'mcp.secret_reference_not_allowed' });
        seen.push(p.text);
      }
    }
    const all = seen.join('\n');
    for (const value of [...Object.values(OPERATOR_SECRETS), OPERATOR_TOKEN]) expect(all).not.toContain(value);
    // The tenant-chosen URL was never called with (or without) the header.
    expect(baitHits).toBe(0);
    expect((await t.ok<Json[]>('GET', '/hecate/v1/tasks')).length).toBe(tasksBefore);
  });

  it('resolves an allowlisted HECATE_MCP_SECRET_* reference for an API key', async () => {
    toolThenAnswer(upstream, 'mcp__h__env', { name: 'TOKEN' });
    const { run } = await runToEnd(t, agentTask([{ ...hostile(), env: { TOKEN: '$HECATE_MCP_SECRET_DEMO' } }]));
    expect(run.status).toBe('completed');
    expect(toolReply().content).toBe(ALLOWED_SECRET);
  });

  it('a stdout line over 10 MiB fails that tool call with a clear error; the server process and /healthz live, the run goes on', async () => {
    const pid = server.proc.pid!;
    toolThenAnswer(upstream, 'mcp__h__huge-line', { mib: 11 });
    const { run, events } = await runToEnd(t, agentTask([hostile()]));
    expect(run.status).toBe('completed');
    const failed = events.find((e) => e.type === 'tool.failed' && e.data.tool_name === 'mcp__h__huge-line');
    expect(failed?.data.error).toMatch(/larger than 10485760 bytes/);
    expect(toolReply()).toMatchObject({ role: 'tool', content: expect.stringMatching(/larger than 10485760 bytes/) });
    expect(server.proc.exitCode).toBeNull();
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect((await op.call('GET', '/healthz')).status).toBe(200);
    // Just under the cap passes (the cap bounds a message, it does not break big answers).
    toolThenAnswer(upstream, 'mcp__h__huge-line', { mib: 9 });
    const under = await runToEnd(t, agentTask([hostile('h', `tag-${uniqueId('u')}`)]));
    expect(under.run.status).toBe('completed');
    expect(toolReply().content).toBe('survived');
  }, 120_000);

  it('a Streamable HTTP server answering with one message over 10 MiB (JSON or one SSE event) fails the probe; the process lives', async () => {
    const huge = 'x'.repeat(11 * 1024 * 1024);
    const remote = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const msg = JSON.parse(raw) as Json;
        if (msg.id === undefined) return void res.writeHead(202).end();
        const result =
          msg.method === 'initialize'
            ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'huge', version: '1' }, instructions: huge }
            : { tools: [] };
        const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
        if (req.url === '/sse') res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${body}\n\n`);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(remote.address() as { port: number }).port}`;
    try {
      for (const path of ['/mcp', '/sse']) {
        const r = await op.call('POST', '/hecate/v1/mcp/probe', { url: `${base}${path}` });
        expect({ path, status: r.status }).toEqual({ path, status: 400 });
        if (path === '/mcp') expect(r.body.error.message).toMatch(/larger than 10485760 bytes/);
      }
      expect(server.proc.exitCode).toBeNull();
      expect((await op.call('GET', '/healthz')).status).toBe(200);
    } finally {
      remote.closeAllConnections();
      await new Promise((r) => remote.close(r));
    }
  }, 60_000);

  it('closes a cached server after the idle limit (GATEWAY_MCP_IDLE_TIMEOUT=2s): no process left', async () => {
    const tag = `tag-${uniqueId('idle')}`;
    toolThenAnswer(upstream, 'mcp__h__pid', {});
    const { run } = await runToEnd(t, agentTask([hostile('h', tag)]));
    expect(run.status).toBe('completed');
    // Cached after the run ends…
    expect(processesMatching(tag)).toBeGreaterThan(0);
    // …and gone within the limit plus a sweep.
    await waitFor(() => processesMatching(tag) === 0 || undefined, { timeoutMs: 6000, what: `the idle ${tag} server to be closed` });
  });
});
