import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HttpClient, type HttpResponse } from '../../support/http';
import type { ServerProcess } from '../../support/server-process';
import { createKey, errorType, type FakeUpstream, OPERATOR_TOKEN, providerEnv, startFakeUpstream, startSecured, type TenantKey } from './security-harness';

/**
 * Issue 26 (medium): a tenant's `operator` key must not start adapters or MCP servers outside a run (probes, adapter
 * health, launcher refresh are `admin`), and the `workspace` of an Agent Chat session must not tell a tenant what
 * exists on the host: a missing path and a forbidden one get the same answer.
 */
describe('tenant keys: admin-only probes, and one answer for missing and forbidden workspaces', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let operator: HttpClient;
  let acme: TenantKey;
  let roots: string;
  let listener: Server;
  let listenerUrl: string;
  let hits = 0;
  const marker = `/mcp-${randomUUID()}`;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    // Only requests for this run's secret path count (other processes on the machine may dial a free port).
    listener = createServer((req, res) => {
      if (req.url === marker) hits += 1;
      req.resume();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}${marker}`;
    roots = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-roots-')));
    mkdirSync(join(roots, 'proj'));
    writeFileSync(join(roots, 'file.txt'), 'x');
    symlinkSync('/etc', join(roots, 'escape'));
    mkdirSync(`${roots}-sibling`);
    server = await startSecured({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_WORKSPACE_ROOTS: roots,
      GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
    });
    operator = new HttpClient(server.url, OPERATOR_TOKEN);
    acme = await createKey(server.url, ['inference', 'operator'], 'acme');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
    await new Promise((r) => listener?.close(r));
  });

  it("refuses a tenant's operator key the MCP probe and the adapter health, probe and refresh-launcher (403 forbidden)", async () => {
    const adapters = ((await acme.client.ok('GET', '/hecate/v1/agent-adapters')) as { id: string }[]).map((a) => a.id);
    expect(adapters.length).toBeGreaterThanOrEqual(3);
    const refused: [string, HttpResponse][] = [
      ['mcp http probe', await acme.client.call('POST', '/hecate/v1/mcp/probe', { name: 'x', url: listenerUrl })],
      [
        'mcp stdio probe',
        await acme.client.call('POST', '/hecate/v1/mcp/probe', { name: 'x', command: 'node', args: ['-e', `fetch(${JSON.stringify(listenerUrl)})`] }),
      ],
    ];
    for (const id of adapters) {
      refused.push([`${id} health`, await acme.client.call('GET', `/hecate/v1/agent-adapters/${id}/health`)]);
      refused.push([`${id} probe`, await acme.client.call('POST', `/hecate/v1/agent-adapters/${id}/probe`)]);
      refused.push([`${id} refresh-launcher`, await acme.client.call('POST', `/hecate/v1/agent-adapters/${id}/refresh-launcher`)]);
    }
    expect(refused.map(([what, r]) => [what, r.status, errorType(r)])).toEqual(refused.map(([what]) => [what, 403, 'forbidden']));
    expect(refused.length).toBe(2 + 3 * adapters.length);
    expect(hits).toBe(0);

    // The operator still probes (the marker works) and refreshes.
    await operator.call('POST', '/hecate/v1/mcp/probe', { name: 'x', url: listenerUrl });
    expect(hits).toBeGreaterThan(0);
    const managed = ((await operator.ok('GET', '/hecate/v1/agent-adapters')) as { id: string; managed?: boolean }[]).find((a) => a.managed);
    if (managed) expect((await operator.call('POST', `/hecate/v1/agent-adapters/${managed.id}/refresh-launcher`)).status).toBe(200);
  }, 60_000);

  const outside = () => [
    '/etc',
    '/root',
    '/',
    '/proc/self/cwd',
    '/nonexistent-hecate-dir',
    '/etc/nonexistent-hecate-dir',
    '/etc/passwd',
    `${roots}-sibling`,
    `${roots}/../`,
    `${roots}/proj/../../`,
    join(roots, 'escape'),
    join(roots, 'escape/ssl'),
    join(roots, 'missing'),
    join(roots, 'file.txt'),
  ];
  /** The answer with the path taken out (as sent, or normalised): what must not differ between a missing and a forbidden path. */
  const shape = (r: HttpResponse, path: string): string => {
    const { request_id: _r, trace_id: _t, ...rest } = (r.body as { error: Record<string, unknown> }).error;
    const strip = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(strip);
      if (typeof v !== 'string') return v;
      let text = v.split(JSON.stringify(path)).join('<path>');
      for (const form of new Set([path, resolve(path)])) text = text.split(` ${form} `).join(' <path> ');
      return text;
    };
    return JSON.stringify({ status: r.status, ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, strip(v)])) });
  };

  it('answers a tenant key the same for a missing and a forbidden Agent Chat workspace, session and turn alike', async () => {
    const bodies = [
      (workspace: string) => ({ runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace }),
      (workspace: string) => ({ runtime_kind: 'external_agent', adapter_id: 'codex', workspace }),
    ];
    const answers = new Set<string>();
    let attacks = 0;
    for (const body of bodies) {
      for (const path of outside()) {
        const r = await acme.client.call('POST', '/hecate/v1/agent-chat/sessions', body(path));
        attacks += 1;
        answers.add(shape(r, path));
      }
    }
    const session = await acme.client.call('POST', '/hecate/v1/agent-chat/sessions', bodies[0](join(roots, 'proj')));
    expect(session.status).toBeLessThan(300);
    const sessionId = (session.body as { data: { id: string } }).data.id;
    for (const path of outside()) {
      const r = await acme.client.call('POST', `/hecate/v1/agent-chat/sessions/${sessionId}/messages`, { content: 'hi', workspace: path, wait: false });
      attacks += 1;
      answers.add(shape(r, path));
    }
    expect(attacks).toBe(3 * outside().length);
    expect([...answers].map((a) => JSON.parse(a) as unknown)).toEqual([
      {
        status: 400,
        type: 'invalid_request',
        message: 'workspace <path> is not an existing directory under GATEWAY_WORKSPACE_ROOTS',
        user_message: expect.any(String),
        operator_action: expect.any(String),
        field: 'workspace',
      },
    ]);
    // Inside the roots the workspace passes (the uninstalled adapter then answers for itself); the operator keeps any host directory.
    const external = await acme.client.call('POST', '/hecate/v1/agent-chat/sessions', bodies[1](join(roots, 'proj')));
    expect(JSON.stringify(external.body)).not.toContain('GATEWAY_WORKSPACE_ROOTS');
    expect((await operator.call('POST', '/hecate/v1/agent-chat/sessions', bodies[0]('/etc'))).status).toBeLessThan(300);
  }, 60_000);

  it("answers a tenant key's task the same for a missing and a forbidden working directory", async () => {
    const answers = new Set<string>();
    for (const path of outside().filter((p) => !p.startsWith(roots) || p.includes('..') || p.includes('escape') || p.endsWith('-sibling'))) {
      const r = await acme.client.call('POST', '/hecate/v1/tasks', {
        execution_kind: 'shell',
        shell_command: 'true',
        workspace_mode: 'in_place',
        working_directory: path,
      });
      answers.add(shape(r, path));
    }
    expect(answers.size).toBe(1);
    expect(JSON.parse([...answers][0]) as unknown).toMatchObject({
      status: 400,
      type: 'invalid_request',
      message: 'working_directory <path> is outside GATEWAY_WORKSPACE_ROOTS (' + roots + ')',
    });
  });
});
