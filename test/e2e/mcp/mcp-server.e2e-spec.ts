import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { HttpClient } from '../../support/http';
import { waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import { builtEntry, embeddedEnv, freePort, type ServerProcess } from '../../support/server-process';
import { createKey, OPERATOR_TOKEN, type TenantKey } from '../security/security-harness';
import { embeddedTasksEnv, type Json, Processes } from '../tasks/tasks-harness';
import { call, connect, fail, McpClient, rawPost, readJson, runRelay, TERMINAL, TOOLS } from './mcp-server-harness';

const ROOT = resolve(__dirname, '../../..');

/**
 * Hecate as an MCP server  on the built server: a real MCP client over Streamable HTTP and over the stdio
 * relay (`npm run mcp`), API keys of two tenants, the fake upstream for Agent Chat and /v1 sessions; then the
 * official conformance suite against a server without a credential.
 */
describe('MCP server (embedded, API keys)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let acme: TenantKey;
  let globex: TenantKey;
  let a: McpClient;
  let b: McpClient;
  let acmeHttp: HttpClient;

  const events = (taskId: string, runId: string) => `hecate://tasks/${taskId}/runs/${runId}/events`;
  const waitRun = (client: McpClient, taskId: string, runId: string, statuses: string[]) =>
    waitFor(
      async () => {
        const { run } = await call(client, 'get_run', { task_id: taskId, run_id: runId });
        return statuses.includes(run.status) ? (run as Json) : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `run ${runId} to be ${statuses.join('|')}` },
    );
  /** A shell task started through MCP: the shell_exec policy holds it for an approval. */
  const gatedRun = async (client: McpClient, command = 'sleep 30') => {
    const { task } = await call(client, 'create_task', { execution_kind: 'shell', shell_command: command, title: 'gated' });
    const { run } = await call(client, 'start_task', { task_id: task.id });
    expect(run).toMatchObject({ task_id: task.id, status: 'awaiting_approval' });
    const { task_approvals } = await call(client, 'list_pending_approvals');
    const approval = (task_approvals as Json[]).find((x) => x.run_id === run.id);
    expect(approval).toMatchObject({ task_id: task.id, kind: 'shell_command', status: 'pending' });
    return { taskId: task.id as string, runId: run.id as string, approvalId: approval!.id as string };
  };

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    server = await procs.start(
      'all',
      embeddedTasksEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN,
        GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
        GATEWAY_TASK_SANDBOX: 'none',
      }),
    );
    [acme, globex] = await Promise.all([createKey(server.url, ['inference', 'operator'], 'acme'), createKey(server.url, ['operator'], 'globex')]);
    acmeHttp = new HttpClient(server.url, acme.secret);
    [a, b] = await Promise.all([connect(server.url, acme.secret), connect(server.url, globex.secret)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await procs.stopAll();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('lists every tool with an input and an output schema, and the resource templates', async () => {
    const { tools } = await a.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect({ name: t.name, input: t.inputSchema.type, output: t.outputSchema?.type, described: Boolean(t.description) }).toEqual({
        name: t.name,
        input: 'object',
        output: 'object',
        described: true,
      });
    }
    expect(tools.find((t) => t.name === 'resolve_approval')?.inputSchema).toMatchObject({
      properties: { decision: { enum: ['approve', 'reject'] } },
      required: expect.arrayContaining(['task_id', 'approval_id', 'decision']),
    });
    const { resourceTemplates } = await a.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual([
      'hecate://chat-sessions/{session_id}/transcript',
      'hecate://tasks/{task_id}/runs/{run_id}/events',
    ]);
    expect((await a.listResources()).resources).toEqual([]);
    expect(a.getServerVersion()).toMatchObject({ name: 'hecate' });
    expect(a.getInstructions()).toContain('create_task');
  });

  it('runs a task to completion: create_task → start_task → get_run → list_run_events, and the run events resource', async () => {
    const { task } = await call(a, 'create_task', { execution_kind: 'file', file_path: 'hello.txt', file_content: 'hello from mcp\n', title: 'mcp file' });
    expect(task).toMatchObject({ title: 'mcp file', execution_kind: 'file', status: 'not_started' });
    const { run } = await call(a, 'start_task', { task_id: task.id });
    expect(run).toMatchObject({ task_id: task.id, number: 1 });
    const done = await waitRun(a, task.id, run.id, TERMINAL);
    expect(done).toMatchObject({ id: run.id, status: 'completed' });

    const page = await call(a, 'list_run_events', { task_id: task.id, run_id: run.id });
    const seqs = (page.events as Json[]).map((e) => e.sequence);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(page.next_after_sequence).toBe(seqs.length);
    const types = (page.events as Json[]).map((e) => e.type);
    expect(types[0]).toBe('run.created');
    expect(page.events.at(-1)).toMatchObject({ type: 'run.finished', data: { final_status: 'completed' } });
    expect((page.events as Json[]).every((e) => e.task_id === task.id && e.run_id === run.id)).toBe(true);
    const next = await call(a, 'list_run_events', { task_id: task.id, run_id: run.id, after_sequence: 1, limit: 2 });
    expect((next.events as Json[]).map((e) => e.sequence)).toEqual([2, 3]);
    expect(next.next_after_sequence).toBe(3);

    const resource = await readJson(a, events(task.id, run.id));
    expect(resource).toMatchObject({ task_id: task.id, run_id: run.id, truncated: false });
    expect(resource.events).toEqual(page.events);
    // The same run through /hecate/v1: one implementation behind both.
    expect(await acmeHttp.ok('GET', `/hecate/v1/tasks/${task.id}/runs/${run.id}`)).toMatchObject({ status: 'completed' });
    expect((await call(a, 'list_tasks', { status: 'completed' })).tasks.map((t: Json) => t.id)).toContain(task.id);
  });

  it('holds a gated run for an approval: list_pending_approvals → resolve_approval → running → cancel_run; late decisions are conflicts', async () => {
    const { taskId, runId, approvalId } = await gatedRun(a);
    const { approval } = await call(a, 'resolve_approval', { task_id: taskId, approval_id: approvalId, decision: 'approve', note: 'via mcp' });
    expect(approval).toMatchObject({ id: approvalId, status: 'approved', resolution_note: 'via mcp' });
    expect(((await call(a, 'list_pending_approvals')).task_approvals as Json[]).map((x) => x.id)).not.toContain(approvalId);
    await waitRun(a, taskId, runId, ['running']);

    const { run } = await call(a, 'cancel_run', { task_id: taskId, run_id: runId, reason: 'enough' });
    expect(run).toMatchObject({ id: runId, status: 'cancelled', last_error: 'enough' });
    expect(await fail(a, 'cancel_run', { task_id: taskId, run_id: runId })).toMatchObject({ type: 'conflict', run_status: 'cancelled' });
    expect(await fail(a, 'resolve_approval', { task_id: taskId, approval_id: approvalId, decision: 'reject' })).toMatchObject({ type: 'conflict' });
    const types = ((await call(a, 'list_run_events', { task_id: taskId, run_id: runId })).events as Json[]).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['approval.requested', 'approval.resolved', 'run.cancelled']));

    // Reject cancels the run it gates.
    const second = await gatedRun(a, 'true');
    await call(a, 'resolve_approval', { task_id: second.taskId, approval_id: second.approvalId, decision: 'reject' });
    expect((await call(a, 'get_run', { task_id: second.taskId, run_id: second.runId })).run).toMatchObject({
      status: 'cancelled',
      error_kind: 'approval_rejected',
    });
  });

  it('answers a bad argument with isError and the /hecate/v1 error envelope; unknown tools and resources are protocol errors', async () => {
    const invalid = await fail(a, 'create_task', { execution_kind: 5, nope: true });
    expect(invalid).toMatchObject({ type: 'invalid_request', request_id: expect.stringMatching(/^req_/), operator_action: expect.any(String) });
    expect(invalid.fields).toEqual(expect.arrayContaining(['nope: property nope should not exist', 'execution_kind must be a string']));
    expect(await fail(a, 'create_task', { shell_command: 'true' })).toMatchObject({
      type: 'invalid_request',
      message: expect.stringContaining('execution_kind'),
    });
    expect(await fail(a, 'start_task', {})).toMatchObject({ type: 'invalid_request', message: expect.stringContaining('task_id') });
    expect(await fail(a, 'resolve_approval', { task_id: 'task_x', approval_id: 'approval_x', decision: 'maybe' })).toMatchObject({ type: 'invalid_request' });
    expect(await fail(a, 'list_run_events', { task_id: 'task_x', run_id: 'run_x', limit: '5' })).toMatchObject({ type: 'invalid_request' });
    expect(await fail(a, 'get_run', { task_id: 'task_missing', run_id: 'run_missing' })).toMatchObject({ type: 'not_found' });
    expect(await fail(a, 'send_agent_chat_message', { session_id: 'x', content: 'hi', stream: true })).toMatchObject({ type: 'invalid_request' });

    await expect(a.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Tool no_such_tool not found',
    });
    await expect(a.readResource({ uri: events('task_missing', 'run_missing') })).rejects.toMatchObject({
      code: -32002,
      data: { error: { type: 'not_found' } },
    });
  });

  it('lists and reads chat sessions recorded through /v1 (tools and the transcript resource)', async () => {
    const session = await acmeHttp.ok('POST', '/hecate/v1/chat/sessions', { title: 'MCP chat' });
    const completion = await acmeHttp.call('POST', '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello mcp' }],
      session_id: session.id,
    });
    expect(completion.status).toBe(200);

    const page = await call(a, 'list_chat_sessions', { limit: 50 });
    expect((page.sessions as Json[]).find((s) => s.id === session.id)).toMatchObject({ title: 'MCP chat', message_count: 2 });
    const got = (await call(a, 'get_chat_session', { session_id: session.id })).session;
    expect(got).toMatchObject({ id: session.id, view: 'active_path' });
    expect((got.messages as Json[]).map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello mcp'],
      ['assistant', 'echo: hello mcp'],
    ]);
    const transcript = await readJson(a, `hecate://chat-sessions/${session.id}/transcript`);
    expect(transcript).toMatchObject({ session_id: session.id, title: 'MCP chat' });
    expect((transcript.messages as Json[]).map((m) => m.id)).toEqual((got.messages as Json[]).map((m) => m.id));
    expect(await fail(a, 'get_chat_session', { session_id: 'chat_missing' })).toMatchObject({ type: 'not_found' });
  });

  it('sends an Agent Chat message: waits for the reply, or answers the turn at once with wait: false', async () => {
    const session = await acmeHttp.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' });
    upstream.script({ content: 'Hello from the model.' });
    const sent = await call(a, 'send_agent_chat_message', { session_id: session.id, content: 'Say hello' });
    expect(sent).toMatchObject({ session_id: session.id, queued: null, turn: { runtime_kind: 'model', status: 'completed' } });
    expect(sent.reply).toMatchObject({ id: sent.turn.assistant_message_id, role: 'assistant', status: 'completed', content: 'Hello from the model.' });

    upstream.script({ content: 'Later.' });
    const quick = await call(a, 'send_agent_chat_message', { session_id: session.id, content: 'And again', wait: false });
    expect(quick).toMatchObject({ session_id: session.id, reply: null, queued: null, turn: { status: expect.stringMatching(/^(queued|running|completed)$/) } });
    const view = await waitFor(
      async () => {
        const s = await acmeHttp.ok('GET', `/hecate/v1/agent-chat/sessions/${session.id}`);
        return (s.messages as Json[]).find((m) => m.id === quick.turn.assistant_message_id && m.status === 'completed') ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the second turn to complete' },
    );
    expect((view.messages as Json[]).map((m) => m.content)).toEqual(['Say hello', 'Hello from the model.', 'And again', 'Later.']);
    expect(await fail(a, 'send_agent_chat_message', { session_id: 'agent_chat_missing', content: 'hi' })).toMatchObject({ type: 'not_found' });
  });

  it('authenticates like /hecate/v1: 401 without or with a wrong key, 403 without the operator scope; GET and DELETE are 405', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const missing = await rawPost(server.url, ping);
    expect({ status: missing.status, type: missing.body.error?.type }).toEqual({ status: 401, type: 'unauthorized' });
    const wrong = await rawPost(server.url, ping, { authorization: 'Bearer hk_not_a_real_key_0123456789' });
    expect({ status: wrong.status, type: wrong.body.error?.type }).toEqual({ status: 401, type: 'unauthorized' });
    const inference = await createKey(server.url, ['inference'], 'acme');
    const scoped = await rawPost(server.url, ping, { authorization: `Bearer ${inference.secret}` });
    expect({ status: scoped.status, type: scoped.body.error?.type }).toEqual({ status: 403, type: 'forbidden' });
    const ok = await rawPost(server.url, ping, { authorization: `Bearer ${acme.secret}` });
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } });
    expect(ok.headers.get('x-request-id')).toMatch(/^req_/);
    // The operator token is a credential too (its tenant: default).
    expect((await rawPost(server.url, ping, { authorization: `Bearer ${OPERATOR_TOKEN}` })).status).toBe(200);

    await expect(connect(server.url)).rejects.toThrow(/401|unauthorized/i);
    await expect(connect(server.url, 'hk_wrong')).rejects.toThrow(/401|unauthorized/i);
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${server.url}/mcp`, { method, headers: { authorization: `Bearer ${acme.secret}`, accept: 'text/event-stream' } });
      expect({ method, status: r.status, allow: r.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
    }
  });

  it("scopes every tool and resource to the key's tenant: another tenant sees none of it and cannot act on it", async () => {
    const { taskId, runId, approvalId } = await gatedRun(a);
    const chat = await acmeHttp.ok('POST', '/hecate/v1/chat/sessions', { title: 'acme only' });
    const agentChat = await acmeHttp.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' });

    expect(((await call(a, 'list_tasks')).tasks as Json[]).map((t) => t.id)).toContain(taskId);
    expect(((await call(b, 'list_tasks')).tasks as Json[]).map((t) => t.id)).not.toContain(taskId);
    expect(((await call(b, 'list_pending_approvals')).task_approvals as Json[]).map((x) => x.id)).not.toContain(approvalId);
    expect(((await call(b, 'list_chat_sessions')).sessions as Json[]).map((s) => s.id)).not.toContain(chat.id);
    for (const [tool, args] of [
      ['get_run', { task_id: taskId, run_id: runId }],
      ['list_run_events', { task_id: taskId, run_id: runId }],
      ['start_task', { task_id: taskId }],
      ['cancel_run', { task_id: taskId, run_id: runId }],
      ['resolve_approval', { task_id: taskId, approval_id: approvalId, decision: 'approve' }],
      ['get_chat_session', { session_id: chat.id }],
      ['send_agent_chat_message', { session_id: agentChat.id, content: 'not yours' }],
    ] as const) {
      expect({ tool, type: (await fail(b, tool, args)).type }).toEqual({ tool, type: 'not_found' });
    }
    await expect(b.readResource({ uri: events(taskId, runId) })).rejects.toMatchObject({ code: -32002 });
    await expect(b.readResource({ uri: `hecate://chat-sessions/${chat.id}/transcript` })).rejects.toMatchObject({ code: -32002 });
    // Nothing moved: the run still waits for its approval, the agent chat got no turn.
    expect((await call(a, 'get_run', { task_id: taskId, run_id: runId })).run.status).toBe('awaiting_approval');
    expect((await acmeHttp.ok('GET', `/hecate/v1/agent-chat/sessions/${agentChat.id}`)).messages).toEqual([]);
    await call(a, 'cancel_run', { task_id: taskId, run_id: runId });
  });

  it('serves the same tools over stdio (npm run mcp): a relay to /mcp with the key, logs only on stderr', async () => {
    const { task } = await call(a, 'create_task', { execution_kind: 'file', file_path: 'stdio.txt', file_content: 'x', title: 'seen over stdio' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [builtEntry('main.mcp.js')],
      env: { PATH: process.env.PATH ?? '', HECATE_BASE_URL: server.url, HECATE_API_KEY: acme.secret },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const stdio = new McpClient({ name: 'hecate-e2e-stdio', version: '1.0.0' });
    await stdio.connect(transport);
    try {
      expect(stdio.getServerVersion()).toMatchObject({ name: 'hecate' });
      const { tools } = await stdio.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
      expect(tools.every((t) => t.outputSchema?.type === 'object')).toBe(true);
      const listed = await call(stdio, 'list_tasks');
      expect((listed.tasks as Json[]).find((t) => t.id === task.id)).toMatchObject({ title: 'seen over stdio' });
      expect(await fail(stdio, 'get_run', { task_id: task.id, run_id: 'run_missing' })).toMatchObject({ type: 'not_found' });
      await expect(stdio.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: 'MCP error -32602: Tool no_such_tool not found',
      });
      expect((await stdio.listResourceTemplates()).resourceTemplates).toHaveLength(2);
    } finally {
      await stdio.close();
    }
    expect(stderr).toContain(`relaying stdio to ${server.url}/mcp`);
  });

  it('the stdio relay exits 1 with the reason on stderr (and nothing on stdout) when it has no server, cannot reach it or is refused', async () => {
    const none = await runRelay({});
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toContain('HECATE_BASE_URL: required');
    const unreachable = await runRelay({ HECATE_BASE_URL: `http://127.0.0.1:${await freePort()}` });
    expect(unreachable).toMatchObject({ code: 1, stdout: '' });
    expect(unreachable.stderr).toMatch(/cannot connect to .*ECONNREFUSED/);
    const refused = await runRelay({ HECATE_BASE_URL: server.url, HECATE_API_KEY: 'hk_wrong_key' });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/HTTP 401.*unauthorized/);
  });
});

/** The suite's client sends no credential: it runs against a server without GATEWAY_AUTH_TOKEN (the local operator). */
describe('MCP server conformance (@modelcontextprotocol/conformance, server mode)', () => {
  const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const BASELINE = join(__dirname, 'conformance-baseline.yml');
  /** The scenarios that apply to Hecate; every other one of the active suite is in the baseline with its reason. */
  const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];
  const procs = new Processes();
  let server: ServerProcess;

  beforeAll(async () => {
    server = await procs.start('all', embeddedEnv());
  }, 120_000);
  afterAll(() => procs.stopAll());

  it('passes every applicable scenario of the active suite; the rest fail only as the baseline says', () => {
    const out = mkdtempSync(join(tmpdir(), 'hecate-conformance-'));
    const run = spawnSync(process.execPath, [CONFORMANCE, 'server', '--url', `${server.url}/mcp`, '--expected-failures', BASELINE, '-o', out], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 110_000,
    });
    expect({ status: run.status, output: run.status === 0 ? '' : `${run.stdout}\n${run.stderr}` }).toEqual({ status: 0, output: '' });

    const checks = new Map<string, Json[]>();
    for (const dir of readdirSync(out)) {
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(dir)![1];
      checks.set(scenario, JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Json[]);
    }
    const baseline = [...readFileSync(BASELINE, 'utf8').matchAll(/^ {2}- ([a-z0-9-]+)$/gm)].map((m) => m[1]);
    expect([...checks.keys()].sort()).toEqual([...APPLICABLE, ...baseline].sort());
    for (const scenario of APPLICABLE) {
      const statuses = checks.get(scenario)!.map((c) => c.status);
      expect({ scenario, statuses: [...new Set(statuses)] }).toEqual({ scenario, statuses: ['SUCCESS'] });
    }
    // Stateless (no session id, so any api pod answers): the multiple-streams scenario stops at its precondition and says so.
    expect(checks.get('server-sse-multiple-streams')!.map((c) => [c.id, c.status])).toEqual([['server-sse-multiple-streams-session', 'WARNING']]);
    // DNS rebinding: a foreign Host/Origin is refused, the loopback one accepted.
    expect(checks.get('dns-rebinding-protection')!.map((c) => [c.id, c.status])).toEqual([
      ['localhost-host-rebinding-rejected', 'SUCCESS'],
      ['localhost-host-valid-accepted', 'SUCCESS'],
    ]);
  });
});
