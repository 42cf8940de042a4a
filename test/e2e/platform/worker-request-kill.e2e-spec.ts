import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStack, type Stack } from '../../support/harness';
import { HttpClient } from '../../support/http';
import { sql, waitFor } from '../../support/infra';
import { MCP_SANDBOX_READ_PATHS, startEverythingHttp } from '../../support/mcp-servers';

const TOKEN = 'worker-request-kill-e2e-token-0123456789';

/**
 * A proxy in front of a Streamable HTTP MCP server that holds the first request it gets and never answers it (the
 * worker that sent it is killed meanwhile), and passes every later request through.
 */
async function holdingProxy(target: string): Promise<{ url: string; held: IncomingMessage[]; passed: number; close(): Promise<void> }> {
  const upstream = new URL(target);
  const state = { held: [] as IncomingMessage[], passed: 0 };
  const pending: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    if (state.held.length === 0) {
      state.held.push(req);
      pending.push(res);
      return;
    }
    state.passed += 1;
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    held: state.held,
    get passed() {
      return state.passed;
    },
    async close() {
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Ask a worker and wait, with the worker killed (SIGKILL) while it runs the request: the api's caller gets the answer
 * from the other worker once the dead one's lease expires, the request's row ends done once, and the dead worker's
 * attempt never answers. Played with an MCP probe of a remote server whose first request is held open.
 */
describe('worker requests: a worker killed mid-request (scaled: api + 2 workers)', () => {
  let stack: Stack;
  let everything: Awaited<ReturnType<typeof startEverythingHttp>>;
  let proxy: Awaited<ReturnType<typeof holdingProxy>>;

  beforeAll(async () => {
    everything = await startEverythingHttp();
    proxy = await holdingProxy(everything.url);
    stack = await startStack({
      mode: 'scaled',
      token: TOKEN,
      workers: 2,
      env: {
        GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
        GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
        GATEWAY_TASK_QUEUE_LEASE_SECONDS: '3',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
    await everything?.stop();
  });

  it('the probe is answered by the surviving worker, once, and its row ends done', async () => {
    const c = new HttpClient(stack.url, TOKEN);
    const answer = c.call('POST', '/hecate/v1/mcp/probe', { name: 'remote', url: proxy.url });

    // The worker that took the request has sent its first MCP request (held) and holds the row's lease.
    const [row] = await waitFor(
      async () => {
        const rows = await sql<{ id: string; lease_owner: string }>(
          stack.db!.url,
          `SELECT id, lease_owner FROM worker_requests WHERE kind = 'mcp.probe' AND status = 'running' AND lease_owner IS NOT NULL`,
        );
        return proxy.held.length === 1 && rows.length === 1 ? rows : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'a worker to take the probe and reach the MCP server' },
    );
    const pid = Number(row.lease_owner.split(':')[1]);
    const [victim] = stack.workers.filter((w) => w.proc.pid === pid);
    const [survivor] = stack.workers.filter((w) => w.proc.pid !== pid);
    expect(victim).toBeDefined();
    victim.proc.kill('SIGKILL');
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const r = await answer;
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('mcp_probe');
    expect((r.body.data.tools as Array<{ name: string }>).map((t) => t.name)).toContain('echo');
    // The survivor's attempt reached the server; the dead worker's held request is the only other one.
    expect(proxy.held).toHaveLength(1);
    expect(proxy.passed).toBeGreaterThan(0);

    const rows = await sql<{ status: string; lease_token: string | null; n: number }>(
      stack.db!.url,
      `SELECT status, lease_token, count(*)::int AS n FROM worker_requests WHERE kind = 'mcp.probe' GROUP BY status, lease_token`,
    );
    expect(rows).toEqual([{ status: 'done', lease_token: null, n: 1 }]);
    expect(survivor.proc.exitCode).toBeNull();
  });
});
