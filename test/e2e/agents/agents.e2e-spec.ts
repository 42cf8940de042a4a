import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpEditor } from '../../support/acp-editor';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { rowsHolding as rowsIn, type ScratchDatabase, sql } from '../../support/infra';
import { HOSTILE, MCP_SANDBOX_READ_PATHS } from '../../support/mcp-servers';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import { call as mcpCall, connect as mcpConnect, fail as mcpFail, type McpClient } from '../mcp/mcp-server-harness';
import { Client, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

/**
 * Saved agents (docs/api.md §5 `agent_id`) on the built server (scaled: one `all` process on a scratch Postgres,
 * queried directly for what is at rest): CRUD, versions, tenant isolation, secrets sealed and redacted; an agent used
 * by an Agent Chat session, an agent_loop task, the MCP server's create_task tool and the ACP agent, with what the fake
 * upstream received as the proof of what ran.
 */
describe('saved agents (scaled)', () => {
  const procs = new Processes();
  const editors: AcpEditor[] = [];
  let upstream: FakeUpstream;
  let db: ScratchDatabase;
  let root: string;
  let url: string;
  let acme: Client;
  let globex: Client;
  let acmeKey: string;

  const LITERAL = `agent-literal-${randomBytes(6).toString('hex')}`;
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  const toolCall = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
  const chats = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as Json);
  const hostile = (env: Record<string, string>) => ({ name: 'h', command: process.execPath, args: [HOSTILE], env });
  const workspace = () => {
    const dir = mkdtempSync(join(root, 'ws-'));
    writeFileSync(join(dir, 'hello.txt'), 'hello agents\n');
    return sandboxOwned(dir);
  };
  const create = async (c: Client, body: Json): Promise<Json> => {
    const r = await c.call('POST', '/hecate/v1/agents', body);
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201, body: { object: 'agent' } });
    return r.body.data as Json;
  };
  const refusal = async (c: Client, method: string, path: string, body?: Json) => {
    const r = await c.call(method, path, body);
    return { status: r.status, type: (r.body as Json)?.error?.type as string, message: (r.body as Json)?.error?.message as string, text: r.text };
  };
  const rowsHolding = (needle: string): Promise<string[]> => rowsIn(db.url, needle);

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    // API keys reach host directories only under GATEWAY_WORKSPACE_ROOTS.
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-agents-')));
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_SECRET_KEY: randomBytes(32).toString('base64'),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_WORKSPACE_ROOTS: root,
      GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
      GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: HOSTILE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') }]),
    });
    db = s.db;
    const server = await procs.start('all', s.env);
    url = server.url;
    const operator = new Client(url);
    const key = async (tenant: string) =>
      (await operator.ok('POST', '/hecate/v1/api-keys', { name: tenant, scopes: ['operator'], tenant_id: tenant })).secret as string;
    acmeKey = await key('acme');
    acme = new Client(url, acmeKey);
    globex = new Client(url, await key('globex'));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(editors.map((e) => e.close()));
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });
  beforeEach(() => upstream.reset());

  it('CRUD with versions: names unique per tenant, field-naming 400s, MCP secrets sealed at rest and redacted in every answer', async () => {
    const body = {
      name: 'reviewer',
      description: 'reviews code',
      provider: 'fake',
      model: 'gpt-4o-mini',
      system_prompt: 'You review code. marker-v1',
      builtin_tools: ['read_file', 'list_dir'],
      approval_policies: ['file_write'],
      budget_micros_usd: 5000,
      max_turns: 3,
      mcp_servers: [{ ...hostile({ API_TOKEN: LITERAL }), approval_policy: 'auto' }],
    };
    const a = await create(acme, body);
    expect(a).toMatchObject({
      id: expect.stringMatching(/^agent_/),
      version: 1,
      name: 'reviewer',
      runtime_kind: 'agent',
      builtin_tools: ['read_file', 'list_dir'],
      approval_policies: ['file_write'],
      max_turns: 3,
      budget_micros_usd: 5000,
      mcp_servers: [{ name: 'h', env: { API_TOKEN: '[redacted]' }, approval_policy: 'auto' }],
    });

    // Names are unique per tenant (409), not across tenants.
    expect(await refusal(acme, 'POST', '/hecate/v1/agents', { name: 'reviewer' })).toMatchObject({ status: 409, type: 'agent_name_taken' });
    const theirs = await create(globex, { name: 'reviewer', model: 'gpt-4o-mini' });

    // 400 invalid_request naming the field; 403 for a `$VAR` nobody allowlisted (the tasks' MCP walls).
    for (const [bad, field] of [
      [{ description: 'no name' }, 'name'],
      [{ name: 'x', builtin_tools: ['rm_rf'] }, 'builtin_tools'],
      [{ name: 'x', approval_policies: ['sometimes'] }, 'approval_policies'],
      [{ name: 'x', max_turns: -1 }, 'max_turns'],
      [{ name: 'x', runtime_kind: 'external_agent' }, 'runtime_kind'],
      [{ name: 'x', mcp_servers: [{ name: 'bad name!', url: 'https://mcp.example.com/mcp' }] }, 'mcp_servers[0].name'],
    ] as Array<[Json, string]>) {
      const r = await refusal(acme, 'POST', '/hecate/v1/agents', bad);
      expect({ status: r.status, type: r.type, names: r.message.includes(field) }).toEqual({ status: 400, type: 'invalid_request', names: true });
    }
    expect(await refusal(acme, 'POST', '/hecate/v1/agents', { name: 'x', mcp_servers: [hostile({ T: '$DATABASE_URL' })] })).toMatchObject({
      status: 403,
      type: 'mcp.secret_reference_not_allowed',
    });

    // PATCH: the next version, fields not sent kept (the sealed secret too).
    const v2 = (await acme.ok('PATCH', `/hecate/v1/agents/${a.id}`, { system_prompt: 'marker-v2' })) as Json;
    expect(v2).toMatchObject({
      id: a.id,
      version: 2,
      system_prompt: 'marker-v2',
      builtin_tools: ['read_file', 'list_dir'],
      mcp_servers: [{ env: { API_TOKEN: '[redacted]' } }],
    });
    // PUT replaces the definition: absent fields go back to their defaults; `[redacted]` keeps the stored value.
    const v3 = (await acme.ok('PUT', `/hecate/v1/agents/${a.id}`, {
      name: 'reviewer-2',
      model: 'gpt-4o-mini',
      mcp_servers: [hostile({ API_TOKEN: '[redacted]' })],
    })) as Json;
    expect(v3).toMatchObject({ version: 3, name: 'reviewer-2', mcp_servers: [{ env: { API_TOKEN: '[redacted]' } }] });
    expect(v3.builtin_tools).toBeUndefined();
    expect(v3.system_prompt).toBeUndefined();
    expect(await refusal(acme, 'PUT', `/hecate/v1/agents/${a.id}`, { name: 'reviewer-2', mcp_servers: [hostile({ OTHER: '[redacted]' })] })).toMatchObject({
      status: 400,
      type: 'invalid_request',
      message: expect.stringContaining('mcp_servers[0].env.OTHER'),
    });

    // Versions, newest first, paged; one version by number.
    const versions = await acme.call('GET', `/hecate/v1/agents/${a.id}/versions`);
    expect(versions.body).toMatchObject({ object: 'agent_versions', has_more: false, next_cursor: null });
    expect((versions.body.data as Json[]).map((v) => [v.version, v.name, v.system_prompt])).toEqual([
      [3, 'reviewer-2', undefined],
      [2, 'reviewer', 'marker-v2'],
      [1, 'reviewer', 'You review code. marker-v1'],
    ]);
    const page1 = await acme.call('GET', `/hecate/v1/agents/${a.id}/versions?limit=2`);
    expect(page1.body).toMatchObject({ has_more: true, next_cursor: '2' });
    const page2 = await acme.call('GET', `/hecate/v1/agents/${a.id}/versions?limit=2&cursor=2`);
    expect((page2.body.data as Json[]).map((v) => v.version)).toEqual([1]);
    expect(await acme.ok('GET', `/hecate/v1/agents/${a.id}/versions/1`)).toMatchObject({
      agent_id: a.id,
      version: 1,
      max_turns: 3,
      mcp_servers: [{ env: { API_TOKEN: '[redacted]' } }],
    });
    expect(await refusal(acme, 'GET', `/hecate/v1/agents/${a.id}/versions/9`)).toMatchObject({ status: 404, type: 'not_found' });
    expect(await refusal(acme, 'GET', `/hecate/v1/agents/${a.id}/versions/latest`)).toMatchObject({ status: 400, type: 'invalid_request' });
    expect(await refusal(acme, 'GET', `/hecate/v1/agents/${a.id}/versions?cursor=nope`)).toMatchObject({ status: 400, type: 'invalid_request' });
    expect(await refusal(acme, 'GET', '/hecate/v1/agents?cursor=nope')).toMatchObject({ status: 400, type: 'invalid_request' });

    // The list pages like the project's other lists (limit, cursor → next_cursor, has_more).
    await create(acme, { name: 'second' });
    await create(acme, { name: 'third' });
    const first = await acme.call('GET', '/hecate/v1/agents?limit=2');
    expect(first.body).toMatchObject({ object: 'agents', has_more: true });
    const rest = await acme.call('GET', `/hecate/v1/agents?limit=2&cursor=${first.body.next_cursor as string}`);
    const names = [...(first.body.data as Json[]), ...(rest.body.data as Json[])].map((x) => x.name);
    expect(names).toEqual(['third', 'second', 'reviewer-2']);
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });

    // No answer and no row holds the literal; the version rows hold its sealed form.
    for (const r of [versions, page1, page2, first, rest]) expect(r.text).not.toContain(LITERAL);
    expect(await rowsHolding(LITERAL)).toEqual([]);
    const [row] = await sql<{ definition: Json }>(db.url, `SELECT definition FROM agent_versions WHERE agent_id = $1 AND version = 3`, [a.id]);
    expect(row.definition.mcp_servers[0].env.API_TOKEN).toMatch(/^hecate-sealed:v1:/);

    // A tenant never sees another tenant's agents: 404 on every route, and its list holds only its own.
    for (const [method, path, b] of [
      ['GET', `/hecate/v1/agents/${a.id}`],
      ['PATCH', `/hecate/v1/agents/${a.id}`, { description: 'mine now' }],
      ['PUT', `/hecate/v1/agents/${a.id}`, { name: 'mine' }],
      ['DELETE', `/hecate/v1/agents/${a.id}`],
      ['GET', `/hecate/v1/agents/${a.id}/versions`],
      ['GET', `/hecate/v1/agents/${a.id}/versions/1`],
    ] as Array<[string, string, Json?]>) {
      expect({ method, path, ...(await refusal(globex, method, path, b)) }).toMatchObject({ method, path, status: 404, type: 'not_found' });
    }
    expect(((await globex.call('GET', '/hecate/v1/agents')).body.data as Json[]).map((x) => x.id)).toEqual([theirs.id]);
    expect(await refusal(globex, 'POST', '/hecate/v1/tasks', { agent_id: a.id, prompt: 'x' })).toMatchObject({ status: 404, type: 'not_found' });
    expect(await refusal(globex, 'POST', '/hecate/v1/agent-chat/sessions', { agent_id: a.id })).toMatchObject({ status: 404, type: 'not_found' });
    expect(await acme.ok('GET', `/hecate/v1/agents/${a.id}`)).toMatchObject({ version: 3 });

    // DELETE removes the agent and its versions.
    expect(await acme.ok('DELETE', `/hecate/v1/agents/${a.id}`)).toEqual({ id: a.id, deleted: true });
    expect(await refusal(acme, 'GET', `/hecate/v1/agents/${a.id}`)).toMatchObject({ status: 404, type: 'not_found' });
    expect(await sql(db.url, `SELECT 1 FROM agent_versions WHERE agent_id = $1`, [a.id])).toEqual([]);
  }, 60_000);

  it('renames racing for one name: one wins, every other answers 409 agent_name_taken (never a 500), and no version is written for them', async () => {
    const racers = await Promise.all([1, 2, 3, 4].map((i) => create(acme, { name: `racer-${i}-${randomBytes(3).toString('hex')}`, model: 'gpt-4o-mini' })));
    const target = `raced-${randomBytes(3).toString('hex')}`;
    for (let round = 0; round < 5; round += 1) {
      const name = `${target}-${round}`;
      const answers = await Promise.all(racers.map((a) => refusal(acme, 'PATCH', `/hecate/v1/agents/${a.id as string}`, { name })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
      for (const a of answers.filter((x) => x.status === 409)) expect(a.type).toBe('agent_name_taken');
    }
    // Each racer's versions: 1, plus one per round it won (5 rounds, one winner each).
    const versions = await Promise.all(racers.map(async (a) => ((await acme.ok('GET', `/hecate/v1/agents/${a.id as string}`)) as Json).version as number));
    expect(versions.reduce((n, v) => n + v - 1, 0)).toBe(5);
  });

  it('an Agent Chat session from an agent runs a model turn with its system prompt and records the agent and version; request fields win', async () => {
    // Through the SDK (libs/sdk, typed from the OpenAPI document): the agent routes and fields are in it.
    const { data: agent } = await acme.api.post('/hecate/v1/agents', {
      body: { name: 'greeter', runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini', system_prompt: 'You are Greeter. marker-greet' },
    });
    expect(agent.version).toBe(1);
    const session = (await acme.ok('POST', '/hecate/v1/agent-chat/sessions', { agent_id: agent.id })) as Json;
    expect(session).toMatchObject({ runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini', agent_id: agent.id, agent_version: 1 });
    upstream.script({ content: 'Hello from Greeter.' });
    const view = (await acme.ok('POST', `/hecate/v1/agent-chat/sessions/${session.id}/messages`, { content: 'hi' })) as Json;
    expect(view.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'completed', content: 'Hello from Greeter.' });
    expect(chats().at(-1)!.messages).toEqual([
      { role: 'system', content: 'You are Greeter. marker-greet' },
      { role: 'user', content: 'hi' },
    ]);
    expect(await acme.ok('GET', `/hecate/v1/agent-chat/sessions/${session.id}`)).toMatchObject({ agent_id: agent.id, agent_version: 1 });

    // A later version; a session pinned to version 1 with its own system prompt.
    await acme.ok('PATCH', `/hecate/v1/agents/${agent.id}`, { system_prompt: 'marker-greet-v2' });
    const latest = (await acme.ok('POST', '/hecate/v1/agent-chat/sessions', { agent_id: agent.id })) as Json;
    expect(latest).toMatchObject({ agent_version: 2 });
    const pinned = (await acme.ok('POST', '/hecate/v1/agent-chat/sessions', {
      agent_id: agent.id,
      agent_version: 1,
      system_prompt: 'explicit prompt',
    })) as Json;
    expect(pinned).toMatchObject({ agent_id: agent.id, agent_version: 1 });
    await acme.ok('POST', `/hecate/v1/agent-chat/sessions/${pinned.id}/messages`, { content: 'again' });
    expect(chats().at(-1)!.messages[0]).toEqual({ role: 'system', content: 'explicit prompt' });

    expect(await refusal(acme, 'POST', '/hecate/v1/agent-chat/sessions', { agent_id: agent.id, agent_version: 7 })).toMatchObject({
      status: 404,
      type: 'not_found',
    });
    expect(await refusal(acme, 'POST', '/hecate/v1/agent-chat/sessions', { agent_id: 'agent_nope' })).toMatchObject({ status: 404, type: 'not_found' });
    expect(await refusal(acme, 'POST', '/hecate/v1/agent-chat/sessions', { agent_id: agent.id, agent_version: 0 })).toMatchObject({
      status: 400,
      type: 'invalid_request',
      message: expect.stringContaining('agent_version'),
    });
  }, 60_000);

  it('an agent_loop task from an agent runs with its prompt, its tools only, its MCP server (the sealed secret reaches it) and its turn cap', async () => {
    const agent = await create(acme, {
      name: 'looper',
      provider: 'fake',
      model: 'gpt-4o-mini',
      system_prompt: 'marker-loop',
      builtin_tools: ['read_file'],
      max_turns: 3,
      budget_micros_usd: 2_000_000,
      mcp_servers: [hostile({ API_TOKEN: LITERAL })],
    });
    const dir = workspace();
    upstream.script(toolCall('mcp__h__env-sha256', { name: 'API_TOKEN' }));
    upstream.script(toolCall('shell_exec', { command: 'echo not offered' }));
    upstream.script(toolCall('read_file', { path: 'hello.txt' }));
    upstream.script({ content: 'never asked: the cap is 3 model calls' });
    const { taskId, runId } = await acme.startTask({ agent_id: agent.id, prompt: 'go', working_directory: dir });
    const task = await acme.ok('GET', `/hecate/v1/tasks/${taskId}`);
    expect(task).toMatchObject({
      execution_kind: 'agent_loop',
      agent_id: agent.id,
      agent_version: 1,
      requested_model: 'gpt-4o-mini',
      system_prompt: 'marker-loop',
      max_turns: 3,
      budget_micros_usd: 2_000_000,
      builtin_tools: ['read_file'],
      mcp_servers: [{ name: 'h', env: { API_TOKEN: '[redacted]' } }],
    });
    const run = await acme.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled', 'awaiting_approval'], 60_000);
    expect(run).toMatchObject({ status: 'failed', error_kind: 'turn_limit_exceeded' });

    const requests = chats();
    expect(requests).toHaveLength(3);
    expect((requests[0].tools as Json[]).map((t) => t.function.name).sort()).toEqual(expect.arrayContaining(['read_file', 'mcp__h__env-sha256']));
    expect((requests[0].tools as Json[]).map((t) => t.function.name).filter((n: string) => !n.startsWith('mcp__'))).toEqual(['read_file']);
    expect(requests[0].messages[0].content).toContain('marker-loop');
    const toolReplies = (requests[2].messages as Json[]).filter((m) => m.role === 'tool').map((m) => m.content as string);
    expect(toolReplies[0]).toBe(sha(LITERAL));
    expect(toolReplies[1]).toMatch(/unknown tool shell_exec/);
    expect(await rowsHolding(LITERAL)).toEqual([]);

    // A field of the request wins over the agent's; agent_id on another kind is refused naming it.
    expect(await acme.createTask({ agent_id: agent.id, prompt: 'x', system_prompt: 'mine', working_directory: dir })).toMatchObject({
      system_prompt: 'mine',
      agent_id: agent.id,
    });
    expect(await refusal(acme, 'POST', '/hecate/v1/tasks', { agent_id: agent.id, execution_kind: 'shell', shell_command: 'true' })).toMatchObject({
      status: 400,
      type: 'invalid_request',
      message: expect.stringContaining('agent_id'),
    });
  }, 90_000);

  it("an agent's approval policies gate the loop's tool calls though the server gates none", async () => {
    // `all_tools` is every gate, as in GATEWAY_TASK_APPROVAL_POLICIES.
    const agent = await create(acme, { name: 'careful', model: 'gpt-4o-mini', builtin_tools: ['read_file'], approval_policies: ['all_tools'] });
    upstream.script(toolCall('read_file', { path: 'hello.txt' }));
    const { taskId, runId } = await acme.startTask({ agent_id: agent.id, prompt: 'read it', working_directory: workspace() });
    expect(await acme.waitStatus(taskId, runId, ['completed', 'failed', 'awaiting_approval'], 60_000)).toMatchObject({ status: 'awaiting_approval' });
    expect(await acme.ok('GET', `/hecate/v1/tasks/${taskId}`)).toMatchObject({
      approval_policies: expect.arrayContaining(['read_file', 'shell_exec', 'network_egress']),
    });
    expect(await acme.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)).toEqual([
      expect.objectContaining({ kind: 'agent_loop_tool_call', status: 'pending' }),
    ]);
    await acme.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/cancel`, {});
  }, 60_000);

  it('an agent Agent Chat turn runs as its agent_loop task (tools and agent recorded on the task)', async () => {
    const agent = await create(acme, {
      name: 'chat-agent',
      model: 'gpt-4o-mini',
      provider: 'fake',
      system_prompt: 'marker-chat-agent',
      builtin_tools: ['list_dir'],
    });
    const session = (await acme.ok('POST', '/hecate/v1/agent-chat/sessions', { agent_id: agent.id, workspace: workspace() })) as Json;
    expect(session).toMatchObject({ runtime_kind: 'agent', agent_id: agent.id, agent_version: 1 });
    upstream.script({ content: 'Nothing to do.' });
    const view = (await acme.ok('POST', `/hecate/v1/agent-chat/sessions/${session.id}/messages`, { content: 'look around' })) as Json;
    const reply = view.messages.at(-1) as Json;
    expect(reply).toMatchObject({ status: 'completed', content: 'Nothing to do.', runtime_kind: 'agent' });
    expect(await acme.ok('GET', `/hecate/v1/tasks/${reply.task_id as string}`)).toMatchObject({
      agent_id: agent.id,
      agent_version: 1,
      builtin_tools: ['list_dir'],
    });
    expect((chats()[0].tools as Json[]).map((t) => t.function.name)).toEqual(['list_dir']);
    expect(chats()[0].messages[0].content).toContain('marker-chat-agent');
  }, 60_000);

  it("the MCP server's create_task takes agent_id (another tenant's agent is not found)", async () => {
    const agent = await create(acme, { name: 'mcp-agent', model: 'gpt-4o-mini', provider: 'fake', system_prompt: 'marker-mcp' });
    const theirs = await create(globex, { name: 'globex-mcp', model: 'gpt-4o-mini' });
    const client: McpClient = await mcpConnect(url, acmeKey);
    try {
      const { task } = await mcpCall(client, 'create_task', { agent_id: agent.id, prompt: 'hello via mcp', working_directory: workspace() });
      expect(task).toMatchObject({ execution_kind: 'agent_loop', agent_id: agent.id, agent_version: 1 });
      upstream.script({ content: 'done via mcp' });
      const { run } = await mcpCall(client, 'start_task', { task_id: task.id });
      const ended = await acme.waitStatus(task.id as string, run.id as string, ['completed', 'failed'], 60_000);
      expect(ended.status).toBe('completed');
      expect(chats()[0].messages[0].content).toContain('marker-mcp');
      expect(await mcpFail(client, 'create_task', { agent_id: theirs.id, prompt: 'x' })).toMatchObject({ type: 'not_found' });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('the ACP agent runs its tasks as HECATE_AGENT_ID, or the agent a session names in _meta.agent_id', async () => {
    const byEnv = await create(acme, { name: 'acp-env', model: 'gpt-4o-mini', provider: 'fake', system_prompt: 'marker-acp-env' });
    const byMeta = await create(acme, { name: 'acp-meta', model: 'gpt-4o-mini', provider: 'fake', system_prompt: 'marker-acp-meta' });
    const editor = await AcpEditor.launch({ HECATE_BASE_URL: url, HECATE_API_KEY: acmeKey, HECATE_AGENT_ID: byEnv.id });
    editors.push(editor);
    await editor.initialize();
    const tasksIn = async (cwd: string) => ((await acme.ok('GET', '/hecate/v1/tasks?limit=200')) as Json[]).filter((t) => t.working_directory === cwd);

    const cwd1 = workspace();
    const s1 = await editor.newSession(cwd1);
    upstream.script({ content: 'env agent here' });
    expect(await editor.prompt(s1, 'who are you')).toEqual({ stopReason: 'end_turn' });
    expect(chats().at(-1)!.messages[0].content).toContain('marker-acp-env');
    expect(await tasksIn(cwd1)).toEqual([expect.objectContaining({ agent_id: byEnv.id, agent_version: 1 })]);

    const cwd2 = workspace();
    const s2 = (await editor.agent.request('session/new', { cwd: cwd2, mcpServers: [], _meta: { agent_id: byMeta.id } })).sessionId;
    upstream.script({ content: 'meta agent here' });
    expect(await editor.prompt(s2, 'and you')).toEqual({ stopReason: 'end_turn' });
    expect(chats().at(-1)!.messages[0].content).toContain('marker-acp-meta');
    expect(await tasksIn(cwd2)).toEqual([expect.objectContaining({ agent_id: byMeta.id })]);

    // An agent the key's tenant does not have fails session/new with the API's error type.
    const theirs = await create(globex, { name: 'acp-globex', model: 'gpt-4o-mini' });
    const refused = await editor.agent.request('session/new', { cwd: workspace(), mcpServers: [], _meta: { agent_id: theirs.id } }).then(
      () => null,
      (err: { data?: Json }) => err,
    );
    expect(refused?.data).toMatchObject({ type: 'not_found', status: 404 });
    expect(editor.out.stderr).not.toContain(acmeKey);
  }, 90_000);
});
