import { EVERYTHING, MCP_SANDBOX_READ_PATHS, MISBEHAVING, startEverythingHttp } from '../../support/mcp-servers';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

/** What a worker needs to run the test servers: their files mounted in its sandbox, loopback HTTP allowed. */
const MCP_ENV = {
  GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
  GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
  // Literal MCP env/header values are stored sealed: scaled mode needs the key (embedded generates one).
  GATEWAY_SECRET_KEY: 'bWNwLWVuZHBvaW50cy1lMmUtc2VjcmV0LWtleS0wMTIzNDU2Nzg5',
};

const LITERAL_ENV = 'literal-env-secret-7f3a91';
const LITERAL_HEADER = 'literal-header-secret-c2d4e8';
const PROBE_LITERAL = 'probe-literal-secret-55aa11';

/** The same assertions in both modes: the probe runs on a worker, the cache is summed over the workers. */
function mcpSuite(mode: string, start: (procs: Processes) => Promise<{ client: Client; servers: ServerProcess[] }>) {
  describe(`MCP endpoints (${mode})`, () => {
    const procs = new Processes();
    let c: Client;
    let servers: ServerProcess[];
    let http: Awaited<ReturnType<typeof startEverythingHttp>>;

    beforeAll(async () => {
      ({ client: c, servers } = await start(procs));
      http = await startEverythingHttp();
    });
    afterAll(async () => {
      await http?.stop();
      await procs.stopAll();
    });

    it('probes a stdio server: its tools, un-namespaced, with input schemas', async () => {
      const r = await c.call('POST', '/hecate/v1/mcp/probe', { command: 'node', args: [EVERYTHING, 'stdio'] });
      expect(r.status).toBe(200);
      expect(r.body.object).toBe('mcp_probe');
      const tools = r.body.data.tools as Json[];
      const echo = tools.find((t) => t.name === 'echo');
      expect(echo).toMatchObject({ name: 'echo', description: expect.any(String), input_schema: { type: 'object' } });
      expect(tools.map((t) => t.name)).toContain('get-sum');
      expect(tools.some((t) => String(t.name).startsWith('mcp__'))).toBe(false);
    });

    it('probes a Streamable HTTP server', async () => {
      const r = await c.call('POST', '/hecate/v1/mcp/probe', { name: 'remote', url: http.url, headers: { 'X-Probe': PROBE_LITERAL } });
      expect(r.status).toBe(200);
      expect((r.body.data.tools as Json[]).map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    });

    it('answers 400 naming the bad fields of an entry', async () => {
      const neither = await c.call('POST', '/hecate/v1/mcp/probe', { args: ['x'] });
      expect(neither.status).toBe(400);
      expect(neither.body.error.type).toBe('invalid_request');
      expect(neither.body.error.message).toContain('mcp_server.command is required for a stdio server');
      const both = await c.call('POST', '/hecate/v1/mcp/probe', { name: 'bad name', command: 'node', url: 'http://127.0.0.1/mcp' });
      expect(both.status).toBe(400);
      expect(both.body.error.message).toMatch(/name must match/);
      expect(both.body.error.message).toMatch(/exactly one of command/);
      const notObject = await c.call('POST', '/hecate/v1/mcp/probe', [1, 2]);
      expect(notObject.status).toBe(400);
    });

    it('answers 400 with the diagnostic when the server cannot start or a $VAR is missing', async () => {
      const missing = await c.call('POST', '/hecate/v1/mcp/probe', {
        command: 'node',
        args: [EVERYTHING, 'stdio'],
        env: { TOKEN: '$HECATE_MCP_SECRET_E2E_UNSET' },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toMatch(/env.TOKEN refers to \$HECATE_MCP_SECRET_E2E_UNSET, which is not set/);
      const ghost = await c.call('POST', '/hecate/v1/mcp/probe', { command: 'no-such-mcp-server-binary', env: { SECRET: PROBE_LITERAL } });
      expect(ghost.status).toBe(400);
      expect(ghost.body.error.message).toMatch(/"probe" did not start/);
      expect(ghost.text).not.toContain(PROBE_LITERAL);
    });

    it('bounds a stuck server: 400 with the diagnostic after the 10 s deadline', async () => {
      const started = Date.now();
      const r = await c.call('POST', '/hecate/v1/mcp/probe', { command: 'node', args: [MISBEHAVING, 'silent'] });
      const elapsed = Date.now() - started;
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(/"probe" did not answer tools\/list within 10 s|"probe" did not start/);
      expect(elapsed).toBeGreaterThanOrEqual(9_000);
      expect(elapsed).toBeLessThan(14_000);
    });

    it('reports the deployment MCP client cache', async () => {
      const r = await c.call('GET', '/hecate/v1/system/mcp/cache');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        object: 'mcp_cache_stats',
        data: { checked_at: expect.any(String), configured: true, entries: 0, in_use: 0, idle: 0, workers: 1 },
      });
      expect(Date.parse(r.body.data.checked_at as string)).not.toBeNaN();
    });

    it('never returns or logs the env and header literals of a task’s mcp_servers', async () => {
      const mcpServers = [
        {
          name: 'gh',
          command: 'node',
          args: ['server.js'],
          env: { TOKEN: LITERAL_ENV, REF: '$HECATE_MCP_SECRET_GITHUB_TOKEN' },
          approval_policy: 'require_approval',
        },
        { name: 'remote', url: 'https://mcp.example.com/mcp', headers: { Authorization: `Bearer ${LITERAL_HEADER}` } },
      ];
      // docs/api.md §4: mcp_servers belong to agent loops; another kind refuses them (400 naming the field).
      for (const kind of [
        { execution_kind: 'shell', shell_command: 'true' },
        { execution_kind: 'git', git_command: 'status' },
        { execution_kind: 'file', file_path: 'a.txt', file_content: 'x' },
      ]) {
        const refused = await c.call('POST', '/hecate/v1/tasks', { ...kind, mcp_servers: mcpServers });
        expect({ kind: kind.execution_kind, status: refused.status, type: refused.body.error?.type }).toEqual({
          kind: kind.execution_kind,
          status: 400,
          type: 'invalid_request',
        });
        expect(refused.body.error.message).toContain('mcp_servers');
        expect(refused.text).not.toContain(LITERAL_ENV);
      }
      const created = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop', prompt: 'use the servers', mcp_servers: mcpServers });
      expect(created.status).toBe(200);
      const expected = [
        { name: 'gh', command: 'node', args: ['server.js'], env: { TOKEN: '[redacted]', REF: '[redacted]' }, approval_policy: 'require_approval' },
        { name: 'remote', url: 'https://mcp.example.com/mcp', headers: { Authorization: '[redacted]' } },
      ];
      expect(created.body.data.mcp_servers).toEqual(expected);
      const got = await c.call('GET', `/hecate/v1/tasks/${created.body.data.id}`);
      expect(got.body.data.mcp_servers).toEqual(expected);
      const list = await c.call('GET', '/hecate/v1/tasks');
      for (const r of [created, got, list]) {
        expect(r.text).not.toContain(LITERAL_ENV);
        expect(r.text).not.toContain(LITERAL_HEADER);
      }
      for (const s of servers) {
        for (const secret of [LITERAL_ENV, LITERAL_HEADER, PROBE_LITERAL]) expect(s.output()).not.toContain(secret);
      }
    });
  });
}

mcpSuite('embedded', async (procs) => {
  const all = await procs.start('all', embeddedTasksEnv(MCP_ENV));
  return { client: new Client(all.url), servers: [all] };
});

mcpSuite('scaled: api + worker processes', async (procs) => {
  const { env } = await scaledEnv(MCP_ENV);
  const [api, worker] = await Promise.all([procs.start('api', env), procs.start('worker', env)]);
  return { client: new Client(api.url), servers: [api, worker] };
});
