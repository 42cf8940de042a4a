import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, SseClient } from '../tasks/tasks-harness';

/**
 * The agent loop on the built server (embedded): a scripted fake upstream (OpenAI protocol) proposes tool calls, the
 * worker runs them in the workspace, the run ends in a final answer; approvals pause it mid-loop; caps end it.
 */
describe('agent loop (embedded)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let anthropic: FakeUpstream;
  let server: ServerProcess;
  let noModel: ServerProcess;
  let c: Client;
  let project: string;

  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

  const runAgent = async (client: Client, dto: Json, statuses = ['completed', 'failed', 'cancelled', 'awaiting_approval']) => {
    const { taskId, runId } = await client.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', ...dto });
    const run = await client.waitStatus(taskId, runId, statuses);
    return { taskId, runId, run };
  };

  beforeAll(async () => {
    [upstream, anthropic] = await Promise.all([startFakeUpstream({ models: ['gpt-4o-mini'] }), startFakeUpstream({ models: ['claude-sonnet-4-5'] })]);
    project = mkdtempSync(join(tmpdir(), 'hecate-agent-project-'));
    writeFileSync(join(project, 'hello.txt'), 'hello world\n');
    writeFileSync(join(project, 'AGENTS.md'), 'Always be brief. house-rule-42\n');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src', 'a.ts'), 'export const answer = 42;\n');
    const base = {
      ...providerEnv('fake', upstream, { kind: 'local' }),
      ...providerEnv('anth', anthropic, { kind: 'local', protocol: 'anthropic' }),
      GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '4',
      // MCP stdio servers run in the sandbox: the test's node_modules (where server-everything lives) is readable there.
      GATEWAY_TASK_SANDBOX_READ_PATHS: [join(__dirname, '../../../node_modules'), join(__dirname, '../../support/mcp')].map((p) => realpathSync(p)).join(','),
    };
    [server, noModel] = await Promise.all([
      procs.start('all', embeddedTasksEnv({ ...base, GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec' })),
      // No model configured (422 at start) and every tool gated (all_tools).
      procs.start(
        'all',
        embeddedTasksEnv({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_SANDBOX: 'none', GATEWAY_TASK_APPROVAL_POLICIES: 'all_tools' }),
      ),
    ]);
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await Promise.all([upstream?.close(), anthropic?.close()]);
  });
  beforeEach(() => {
    upstream.reset();
    anthropic.reset();
  });

  it('read → edit → list loop ends in a final answer: the file changed, the events in order, the results went back to the model', async () => {
    upstream.script(call('read_file', { path: 'hello.txt' }));
    upstream.script(call('file_edit', { path: 'hello.txt', old_string: 'world', new_string: 'agent' }));
    upstream.script(call('grep', { pattern: 'answer', glob: 'src/**' }));
    upstream.script({ content: 'Changed hello.txt to greet the agent.' });
    const { taskId, runId, run } = await runAgent(c, { prompt: 'Make hello.txt greet the agent', working_directory: project });
    expect(run).toMatchObject({ status: 'completed', model: 'gpt-4o-mini', provider: 'fake' });
    expect(readFileSync(join(run.workspace_path, 'hello.txt'), 'utf8')).toBe('hello agent\n');
    expect(readFileSync(join(project, 'hello.txt'), 'utf8')).toBe('hello world\n');

    const requests = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(requests).toHaveLength(4);
    const first = requests[0].body as Json;
    expect(first.messages[0].role).toBe('system');
    expect(first.messages[0].content).toContain(run.workspace_path);
    expect(first.messages[0].content).toContain('house-rule-42');
    expect(first.messages[1]).toEqual({ role: 'user', content: 'Make hello.txt greet the agent' });
    expect((first.tools as Json[]).map((t) => t.function.name)).toEqual(
      expect.arrayContaining([
        'read_file',
        'list_dir',
        'grep',
        'glob',
        'file_write',
        'file_edit',
        'shell_exec',
        'git_exec',
        'git_status',
        'git_diff',
        'http_request',
      ]),
    );
    const second = (requests[1].body as Json).messages as Json[];
    expect(second.at(-1)).toMatchObject({ role: 'tool', content: 'hello world\n' });
    const fourth = (requests[3].body as Json).messages as Json[];
    expect(fourth.at(-1)).toMatchObject({ role: 'tool', content: 'src/a.ts:1: export const answer = 42;' });

    const events = await c.events(taskId, runId);
    const types = events.map((e) => e.type as string);
    const order = (t: string) => types.indexOf(t);
    for (const t of [
      'turn.started',
      'model.call.started',
      'model.call.completed',
      'assistant.tool_call_proposed',
      'turn.completed',
      'assistant.final_answer',
      'run.finished',
    ]) {
      expect(types).toContain(t);
    }
    expect(order('turn.started')).toBeLessThan(order('model.call.completed'));
    const readDone = events.findIndex((e) => e.type === 'tool.completed' && e.data.tool_name === 'read_file');
    expect(order('assistant.tool_call_proposed')).toBeLessThan(readDone);
    expect(readDone).toBeLessThan(types.lastIndexOf('model.call.started'));
    expect(order('assistant.final_answer')).toBeLessThan(order('run.finished'));
    expect(types.filter((t) => t === 'turn.completed')).toHaveLength(4);

    const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
    expect(artifacts.map((a) => a.kind)).toEqual(expect.arrayContaining(['agent_conversation', 'patch', 'summary']));
    const patch = artifacts.find((a) => a.kind === 'patch')!;
    expect(patch).toMatchObject({ status: 'applied', path: 'hello.txt' });
  });

  it('file_edit with propose=true creates a proposed patch that the patches API applies', async () => {
    upstream.script(call('file_edit', { path: 'hello.txt', old_string: 'hello', new_string: 'goodbye', propose: true }));
    upstream.script({ content: 'Proposed the change.' });
    const { taskId, runId, run } = await runAgent(c, { prompt: 'propose', working_directory: project });
    expect(run.status).toBe('completed');
    expect(readFileSync(join(run.workspace_path, 'hello.txt'), 'utf8')).toBe('hello world\n');
    const patches = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches`)) as unknown as Json[];
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({ status: 'proposed', path: 'hello.txt' });
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches/${patches[0].artifact.id}/apply`);
    expect(readFileSync(join(run.workspace_path, 'hello.txt'), 'utf8')).toBe('goodbye world\n');
  });

  it('a gated tool call pauses the run under one agent_loop_tool_call approval; approve dispatches exactly it with no new model call', async () => {
    upstream.script(call('shell_exec', { command: 'echo approved > out.txt' }));
    upstream.script({ content: 'Wrote out.txt.' });
    const { taskId, runId, run } = await runAgent(c, { prompt: 'write out.txt' });
    expect(run.status).toBe('awaiting_approval');
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)) as unknown as Json[];
    expect(approval).toMatchObject({
      kind: 'agent_loop_tool_call',
      status: 'pending',
      details: { tool_calls: [{ name: 'shell_exec', arguments: JSON.stringify({ command: 'echo approved > out.txt' }) }] },
    });
    expect(existsSync(join(run.workspace_path, 'out.txt'))).toBe(false);
    expect(upstream.requestCount).toBe(1);
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    const done = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(readFileSync(join(run.workspace_path, 'out.txt'), 'utf8')).toBe('approved\n');
    // After the approval: the approved call ran, then one model call for the answer — not a repeat of the first.
    const requests = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(requests).toHaveLength(2);
    expect(((requests[1].body as Json).messages as Json[]).at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('exit code 0') });
  });

  it('reject cancels the run and the call never runs', async () => {
    upstream.script(call('shell_exec', { command: 'echo nope > rejected.txt' }));
    const { taskId, runId, run } = await runAgent(c, { prompt: 'try' });
    expect(run.status).toBe('awaiting_approval');
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)) as unknown as Json[];
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/approvals/${approval.id}/resolve`, { decision: 'reject' });
    expect((await c.run(taskId, runId)).status).toBe('cancelled');
    expect(existsSync(join(run.workspace_path, 'rejected.txt'))).toBe(false);
    expect(upstream.requestCount).toBe(1);
  });

  it('stops at GATEWAY_TASK_AGENT_LOOP_MAX_TURNS, fails a blank final answer, and a response with more than 16 tool calls', async () => {
    for (let i = 0; i < 4; i++) upstream.script(call('list_dir', {}));
    const capped = await runAgent(c, { prompt: 'loop forever' });
    expect(capped.run).toMatchObject({ status: 'failed', error_kind: 'turn_limit_exceeded' });
    expect(upstream.requestCount).toBe(4);

    upstream.reset();
    upstream.script({ content: '   ' });
    expect((await runAgent(c, { prompt: 'say nothing' })).run).toMatchObject({ status: 'failed', error_kind: 'blank_final_answer' });

    upstream.reset();
    upstream.script({ toolCalls: Array.from({ length: 17 }, (_, i) => ({ name: 'list_dir', arguments: {}, id: `call_${i}` })) });
    expect((await runAgent(c, { prompt: 'too many' })).run).toMatchObject({ status: 'failed', error_kind: 'too_many_tool_calls' });
  });

  it('http_request to a metadata or loopback address is refused by policy and the model is told so', async () => {
    upstream.script(call('http_request', { url: 'http://169.254.169.254/latest/meta-data/iam' }));
    upstream.script(call('http_request', { url: `${upstream.url}/v1/models` }));
    upstream.script({ content: 'Could not fetch.' });
    const { run } = await runAgent(c, { prompt: 'fetch the metadata' });
    expect(run.status).toBe('completed');
    const requests = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(((requests[1].body as Json).messages as Json[]).at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('refused by the outbound policy'),
    });
    expect(((requests[2].body as Json).messages as Json[]).at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('private or loopback') });
  });

  it('continue appends a prompt to the saved conversation; retry-from-turn re-issues turn N; resume hydrates it', async () => {
    upstream.script(call('read_file', { path: 'hello.txt' }));
    upstream.script({ content: 'first answer' });
    const first = await runAgent(c, { prompt: 'read hello', working_directory: project });
    expect(first.run.status).toBe('completed');
    const chat = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    const roles = (r: { body: unknown }) => ((r.body as Json).messages as Json[]).map((m) => m.role as string);

    upstream.script({ content: 'bye' });
    const continued = await c.ok('POST', `/hecate/v1/tasks/${first.taskId}/runs/${first.runId}/continue`, { prompt: 'now say bye' });
    expect(continued).toMatchObject({ resumed_from_run_id: first.runId, workspace_path: first.run.workspace_path, number: 2 });
    expect(await c.waitStatus(first.taskId, continued.id as string, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const afterContinue = chat().at(-1)!;
    expect(roles(afterContinue)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(((afterContinue.body as Json).messages as Json[]).at(-1)).toEqual({ role: 'user', content: 'now say bye' });

    upstream.script({ content: 'second try' });
    const retried = await c.ok('POST', `/hecate/v1/tasks/${first.taskId}/runs/${first.runId}/retry-from-turn`, { turn: 2, reason: 'explore' });
    expect(await c.waitStatus(first.taskId, retried.id as string, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(roles(chat().at(-1)!)).toEqual(['system', 'user', 'assistant', 'tool']);
    const retriedEvents = await c.events(first.taskId, retried.id as string);
    expect(retriedEvents.find((e) => e.type === 'run.resumed_from_event')).toMatchObject({ data: { from_run_id: first.runId, reason: 'explore' } });

    upstream.script({ content: 'resumed' });
    const resumed = await c.ok('POST', `/hecate/v1/tasks/${first.taskId}/runs/${retried.id}/resume`, { reason: 'again' });
    expect(await c.waitStatus(first.taskId, resumed.id as string, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(roles(chat().at(-1)!)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);

    const call400 = async (path: string, body: Json) => (await c.call('POST', `/hecate/v1/tasks/${first.taskId}/runs/${first.runId}/${path}`, body)).status;
    expect(await call400('retry-from-turn', { turn: 3 })).toBe(400);
    expect(await call400('retry-from-turn', { turn: 0 })).toBe(400);
    expect(await call400('continue', { prompt: '  ' })).toBe(400);
    const shell = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await c.waitStatus(shell.taskId, shell.runId, ['completed', 'failed', 'awaiting_approval']);
    expect((await c.call('POST', `/hecate/v1/tasks/${shell.taskId}/runs/${shell.runId}/continue`, { prompt: 'x' })).status).toBe(400);
  });

  it('continue answers 409 while the source run is still active', async () => {
    upstream.script(call('shell_exec', { command: 'true' }));
    const { taskId, runId, run } = await runAgent(c, { prompt: 'gate me' });
    expect(run.status).toBe('awaiting_approval');
    const res = await c.call('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/continue`, { prompt: 'more' });
    expect(res.status).toBe(409);
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/cancel`);
  });

  it('runs over an Anthropic-protocol provider: tool_use out, tool_result back, a final answer', async () => {
    anthropic.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'hello.txt' }, id: 'toolu_1' }] });
    anthropic.script({ content: 'It says hello world.' });
    const { taskId, runId, run } = await runAgent(c, { prompt: 'what does hello.txt say?', working_directory: project, requested_model: 'claude-sonnet-4-5' });
    expect(run).toMatchObject({ status: 'completed', provider: 'anth', model: 'claude-sonnet-4-5' });
    const requests = anthropic.requests.filter((r) => r.path === '/v1/messages');
    expect(requests).toHaveLength(2);
    const second = requests[1].body as Json;
    expect(second.system).toEqual(expect.anything());
    const last = (second.messages as Json[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toEqual([expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_1' })]);
    expect(JSON.stringify(last.content)).toContain('hello world');
    const final = (await c.events(taskId, runId)).find((e) => e.type === 'assistant.final_answer');
    expect(final!.data.text).toBe('It says hello world.');
  });

  it('budget_micros_usd: spend is recorded per call and a call the rest cannot cover is not made', async () => {
    // 1 micro-USD per output token: a call's worst case is max_tokens (4096) micro-USD.
    await c.ok('PUT', '/hecate/v1/settings/pricing/fake/gpt-4o-mini', {
      input_micros_usd_per_million_tokens: 1_000_000,
      output_micros_usd_per_million_tokens: 1_000_000,
    });
    try {
      upstream.script({ ...call('list_dir', {}), usage: { input: 50, output: 10 } });
      upstream.script({ content: 'never asked', usage: { input: 50, output: 10 } });
      const { taskId, runId, run } = await runAgent(c, { prompt: 'spend', budget_micros_usd: 4100 });
      expect(run).toMatchObject({ status: 'failed', error_kind: 'budget_exceeded', total_cost_micros_usd: 60 });
      expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
      const turn = (await c.events(taskId, runId)).find((e) => e.type === 'turn.completed')!;
      expect(turn.data).toMatchObject({ turn: 1, cost_micros_usd: 60, run_cost_micros_usd: 60, task_cost_micros_usd: 60, input_tokens: 50, output_tokens: 10 });
    } finally {
      await c.ok('DELETE', '/hecate/v1/settings/pricing/fake/gpt-4o-mini');
    }
  });

  it("the run's live stream carries the model's deltas and a running tool's tool_progress, resumable by index; progress never enters the conversation", async () => {
    upstream.script(call('shell_exec', { command: 'echo one; sleep 0.3; echo two' }));
    upstream.script({ content: 'alpha beta gamma', chunks: 3 });
    const { taskId, runId, run } = await runAgent(c, { prompt: 'run and report' });
    expect(run.status).toBe('awaiting_approval');
    const live = new SseClient(`${c.url}/hecate/v1/tasks/${taskId}/runs/${runId}/live`);
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)) as unknown as Json[];
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    await live.done;
    const events = live.events;
    const progress = events.filter((e) => e.event === 'tool_progress').map((e) => e.data as Json);
    expect(
      progress
        .filter((p) => !p.closed)
        .map((p) => p.text)
        .join(''),
    ).toBe('one\ntwo\n');
    expect(progress.at(-1)).toMatchObject({ type: 'tool_progress', closed: true, tool_call_id: expect.any(String) });
    expect(progress.filter((p) => !p.closed)[0]).toMatchObject({ stream: 'stdout', ts: expect.any(Number) });
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => (e.data as Json).content ?? '')
      .join('');
    expect(text).toBe('alpha beta gamma');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { run_id: runId, status: 'completed' } });
    const ids = events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0] + i));
    // Resume after the first tool_progress frame: exactly the frames after it.
    const firstProgress = events.find((e) => e.event === 'tool_progress')!;
    const resumed = new SseClient(`${c.url}/hecate/v1/tasks/${taskId}/runs/${runId}/live`, { 'last-event-id': firstProgress.id! });
    await resumed.done;
    expect(resumed.events.filter((e) => e.id !== undefined).map((e) => e.id)).toEqual(
      events.filter((e) => e.id !== undefined && Number(e.id) > Number(firstProgress.id)).map((e) => e.id),
    );
    // The model got the tool's result, not its progress frames.
    const second = upstream.requests.filter((r) => r.path === '/v1/chat/completions')[1].body as Json;
    expect(JSON.stringify(second.messages)).not.toContain('tool_progress');
  });

  describe('MCP tools', () => {
    const everything = (extra: Json = {}) => ({
      name: 'everything',
      command: process.execPath,
      args: [realpathSync(join(__dirname, '../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js')), 'stdio'],
      ...extra,
    });
    const lastToolMessage = (i: number) => ((upstream.requests.filter((r) => r.path === '/v1/chat/completions')[i].body as Json).messages as Json[]).at(-1);

    it("offers the servers' tools as mcp__<server>__<tool> and calls them (server-everything over stdio, in the sandbox)", async () => {
      upstream.script(call('mcp__everything__echo', { message: 'hello mcp' }));
      upstream.script({ content: 'It echoed.' });
      const { taskId, runId, run } = await runAgent(c, { prompt: 'echo', mcp_servers: [everything()] });
      expect(run.status).toBe('completed');
      const first = upstream.requests.filter((r) => r.path === '/v1/chat/completions')[0].body as Json;
      expect((first.tools as Json[]).map((t) => t.function.name)).toEqual(
        expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'read_file']),
      );
      expect(lastToolMessage(1)).toMatchObject({ role: 'tool', content: expect.stringContaining('hello mcp') });
      const done = (await c.events(taskId, runId)).find((e) => e.type === 'tool.completed' && e.data.tool_name === 'mcp__everything__echo');
      expect(done!.data).toMatchObject({ mcp_server: 'everything', mcp_tool: 'echo', result: 'dispatched' });
    });

    it('more tools than one model request can carry: the run fails with too_many_tools before any model call', async () => {
      const misbehaving = {
        name: 'wide',
        command: process.execPath,
        args: [realpathSync(join(__dirname, '../../support/mcp/misbehaving-server.mjs')), '--many=120'],
      };
      const { taskId, runId, run } = await runAgent(c, { prompt: 'use them', mcp_servers: [misbehaving] });
      expect(run).toMatchObject({ status: 'failed', error_kind: 'too_many_tools' });
      expect(run.last_error).toMatch(/the run would offer the model \d+ tools \(\d+ built-in; MCP wide: 12\d\); at most 128/);
      expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
      expect((await c.events(taskId, runId)).some((e) => e.type === 'model.call.started')).toBe(false);
    });

    it('MCP servers that offer no tool: the run fails with mcp_no_tools, and the model is never called without them', async () => {
      const empty = { name: 'empty', command: process.execPath, args: [realpathSync(join(__dirname, '../../support/mcp/misbehaving-server.mjs')), 'no-tools'] };
      const { taskId, runId, run } = await runAgent(c, { prompt: 'use the tools', mcp_servers: [empty] });
      expect(run).toMatchObject({ status: 'failed', error_kind: 'mcp_no_tools' });
      expect(run.last_error).toBe("the run's MCP servers (empty) offered no tools; the model was not called without them");
      expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
      expect((await c.events(taskId, runId)).some((e) => e.type === 'model.call.started')).toBe(false);
    });

    it('approval_policy=block answers the model with a tool error and emits policy.tool_blocked; require_approval pauses', async () => {
      upstream.script(call('mcp__everything__echo', { message: 'nope' }));
      upstream.script({ content: 'Blocked, fine.' });
      const blocked = await runAgent(c, { prompt: 'echo', mcp_servers: [everything({ approval_policy: 'block' })] });
      expect(blocked.run.status).toBe('completed');
      expect(lastToolMessage(1)).toMatchObject({ role: 'tool', content: expect.stringContaining('blocked by policy') });
      const events = await c.events(blocked.taskId, blocked.runId);
      expect(events.find((e) => e.type === 'policy.tool_blocked')!.data).toMatchObject({ tool_name: 'mcp__everything__echo', kind: 'mcp', policy: 'block' });

      upstream.reset();
      upstream.script(call('mcp__everything__echo', { message: 'may I' }));
      const gated = await runAgent(c, { prompt: 'echo', mcp_servers: [everything({ approval_policy: 'require_approval' })] });
      expect(gated.run.status).toBe('awaiting_approval');
      const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${gated.taskId}/approvals`)) as unknown as Json[];
      expect(approval).toMatchObject({ kind: 'agent_loop_tool_call', details: { tool_calls: [{ name: 'mcp__everything__echo' }] } });
      await c.ok('POST', `/hecate/v1/tasks/${gated.taskId}/runs/${gated.runId}/cancel`);
    });

    it('validates mcp_servers at create (400 naming the field) and never returns their secrets', async () => {
      const bad = await c.call('POST', '/hecate/v1/tasks', {
        execution_kind: 'agent_loop',
        prompt: 'x',
        mcp_servers: [{ name: 'bad name!', command: 'x' }, { name: 'ok' }],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('mcp_servers[0]');
      expect(bad.body.error.message).toContain('mcp_servers[1]');
      const task = await c.ok('POST', '/hecate/v1/tasks', {
        execution_kind: 'agent_loop',
        prompt: 'x',
        mcp_servers: [
          everything({ env: { SECRET_TOKEN: 'literal-mcp-secret-0123' } }),
          { name: 'remote', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer header-secret-0123' } },
        ],
      });
      const shown = JSON.stringify([task, await c.ok('GET', `/hecate/v1/tasks/${task.id}`), await c.ok('GET', '/hecate/v1/tasks')]);
      expect(shown).not.toContain('literal-mcp-secret-0123');
      expect(shown).not.toContain('header-secret-0123');
      expect(shown).toContain('[redacted]');
      expect(server.output()).not.toContain('literal-mcp-secret-0123');
    });
  });

  it('all_tools gates every built-in tool, read_file included', async () => {
    upstream.script(call('read_file', { path: 'x.txt' }));
    const gated = await runAgent(new Client(noModel.url), { prompt: 'read' });
    expect(gated.run.status).toBe('awaiting_approval');
    const [approval] = (await new Client(noModel.url).ok('GET', `/hecate/v1/tasks/${gated.taskId}/approvals`)) as unknown as Json[];
    expect(approval).toMatchObject({ kind: 'agent_loop_tool_call', details: { tool_calls: [{ name: 'read_file' }] } });
    await new Client(noModel.url).ok('POST', `/hecate/v1/tasks/${gated.taskId}/runs/${gated.runId}/cancel`);
  });

  it('start answers 422 model_not_configured when no model resolves, and creates no run', async () => {
    const other = new Client(noModel.url);
    const task = await other.createTask({ execution_kind: 'agent_loop', prompt: 'hi' });
    const res = await other.call('POST', `/hecate/v1/tasks/${task.id}/start`);
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('model_not_configured');
    expect(((await other.ok('GET', `/hecate/v1/tasks/${task.id}/runs`)) as unknown as Json[]).length).toBe(0);
    const bad = await other.call('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop' });
    expect(bad.status).toBe(400);
  });
});
