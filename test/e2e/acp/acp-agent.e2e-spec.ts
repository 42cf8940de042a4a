import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpEditor, choose, spawnAcpAgent } from '../../support/acp-editor';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { EVERYTHING, MCP_SANDBOX_READ_PATHS } from '../../support/mcp-servers';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

/**
 * Hecate as an ACP agent: an editor built from the ACP SDK launches `node dist/src/main.acp.js`, which drives the built
 * server (embedded) over `/hecate/v1` with an API key; the fake upstream scripts the model's turns.
 */
describe('ACP agent for editors (npm run acp)', () => {
  const procs = new Processes();
  const editors: AcpEditor[] = [];
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let operator: Client;
  let apiKey: string;
  let root: string;

  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
  const completions = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions');
  // An editor's folder belongs to its user: here the sandbox uid (an API key's command never runs as root, so a
  // root-owned folder under the roots would be read-only to it).
  const editorDir = () => sandboxOwned(mkdtempSync(join(root, 'editor-')));

  const launch = async (env: Record<string, string> = {}) => {
    const editor = await AcpEditor.launch({ HECATE_BASE_URL: server.url, HECATE_API_KEY: apiKey, HECATE_MODEL: 'gpt-4o-mini', ...env });
    editors.push(editor);
    await editor.initialize();
    return editor;
  };
  const tasksIn = async (cwd: string): Promise<Json[]> =>
    ((await operator.ok('GET', '/hecate/v1/tasks?limit=200')) as Json[]).filter((t) => t.working_directory === cwd);
  const runsOf = async (taskId: string): Promise<Json[]> =>
    ((await operator.ok('GET', `/hecate/v1/tasks/${taskId}/runs`)) as Json[]).sort((a, b) => a.number - b.number);

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    // API keys reach host directories only under GATEWAY_WORKSPACE_ROOTS: the editors' folders live under this one.
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-acp-')));
    server = await procs.start(
      'all',
      embeddedTasksEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
        GATEWAY_WORKSPACE_ROOTS: root,
        GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
        // The editor connects with an API key: its stdio MCP server must be on the operator's allowlist.
        GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: EVERYTHING.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') }]),
      }),
    );
    operator = new Client(server.url);
    apiKey = (await operator.ok('POST', '/hecate/v1/api-keys', { name: 'editor', scopes: ['operator'] })).secret;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(editors.map((e) => e.close()));
    // Only ACP frames on stdout; the credential never reaches the editor's stream or the agent's logs.
    for (const e of editors) {
      for (const line of e.out.stdout.split('\n').filter(Boolean)) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      expect(e.out.stdout).not.toContain(apiKey);
      expect(e.out.stderr).not.toContain(apiKey);
    }
    await procs.stopAll();
    await upstream?.close();
  });

  beforeEach(() => upstream.reset());

  it('initialize: ACP v1, in-place sessions, MCP over stdio and HTTP, no auth methods', async () => {
    const editor = await AcpEditor.launch({ HECATE_BASE_URL: server.url, HECATE_API_KEY: apiKey });
    editors.push(editor);
    expect(await editor.initialize()).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: false,
        sessionCapabilities: { resume: {}, close: {} },
        promptCapabilities: { embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
      },
      authMethods: [],
      agentInfo: { name: 'hecate' },
    });
  });

  it('one editor session is one in-place agent_loop task: the first prompt streams text and writes in the cwd, the next continues the task', async () => {
    const editor = await launch();
    const cwd = editorDir();
    const sessionId = await editor.newSession(cwd);

    upstream.script(call('file_write', { path: 'notes.txt', content: 'written by the agent\n' }));
    upstream.script({ content: 'I wrote notes.txt for you.', chunks: 4 });
    expect(await editor.prompt(sessionId, 'Write notes.txt')).toEqual({ stopReason: 'end_turn' });

    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('written by the agent\n');
    const first = editor.of(sessionId);
    expect(first.filter((u) => u.sessionUpdate === 'agent_message_chunk').length).toBeGreaterThan(1);
    expect(editor.text(sessionId)).toBe('I wrote notes.txt for you.');
    const toolCall = first.find((u) => u.sessionUpdate === 'tool_call');
    expect(toolCall).toMatchObject({
      title: 'Write notes.txt',
      kind: 'edit',
      status: 'pending',
      rawInput: { path: 'notes.txt', content: 'written by the agent\n' },
      locations: [{ path: join(cwd, 'notes.txt') }],
    });
    const id = (toolCall as { toolCallId: string }).toolCallId;
    const statuses = first.flatMap((u) => (u.sessionUpdate === 'tool_call_update' && u.toolCallId === id && u.status ? [u.status] : []));
    expect(statuses).toEqual(['in_progress', 'completed']);
    // The tool call's card comes before the answer's text.
    expect(first.findIndex((u) => u.sessionUpdate === 'tool_call')).toBeLessThan(first.findIndex((u) => u.sessionUpdate === 'agent_message_chunk'));

    const [task] = await tasksIn(cwd);
    expect(task).toMatchObject({ execution_kind: 'agent_loop', workspace_mode: 'in_place', requested_model: 'gpt-4o-mini', status: 'completed' });

    const mark = editor.updates.length;
    upstream.script({ content: 'Second answer.' });
    expect(await editor.prompt(sessionId, 'And now shorten it')).toEqual({ stopReason: 'end_turn' });
    expect(editor.text(sessionId, mark)).toBe('Second answer.');

    // Still one task; its second run continued the first, and the model saw the whole conversation.
    expect(await tasksIn(cwd)).toHaveLength(1);
    const runs = await runsOf(task.id);
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(runs[1].resumed_from_run_id).toBe(runs[0].id);
    const messages = (completions().at(-1)!.body as Json).messages as Json[];
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Write notes.txt', 'And now shorten it']);
    expect(messages).toContainEqual(expect.objectContaining({ role: 'assistant', content: 'I wrote notes.txt for you.' }));
    expect(messages).toContainEqual(expect.objectContaining({ role: 'tool', tool_call_id: id }));
  });

  it('an editor restarted elsewhere resumes its session by id (session/resume): the next prompt continues the same task; session/close lets it go', async () => {
    const first = await launch();
    const cwd = editorDir();
    const sessionId = await first.newSession(cwd);
    upstream.script({ content: 'One.' });
    expect(await first.prompt(sessionId, 'First question')).toEqual({ stopReason: 'end_turn' });
    const [task] = await tasksIn(cwd);
    expect(task.client_ref).toBe(sessionId);
    expect(await first.close()).toBe(0);

    // Another agent process (the editor on another machine): nothing in its memory, the task found by the session id.
    const second = await launch();
    await expect(second.agent.request('session/resume', { sessionId, cwd: '/somewhere/else', mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(second.agent.request('session/resume', { sessionId: 'not-a-hecate-session', cwd, mcpServers: [] })).rejects.toBeDefined();
    expect(await second.agent.request('session/resume', { sessionId, cwd, mcpServers: [] })).toEqual({});
    upstream.script({ content: 'Two.' });
    expect(await second.prompt(sessionId, 'Second question')).toEqual({ stopReason: 'end_turn' });
    expect(second.text(sessionId)).toBe('Two.');
    expect(await tasksIn(cwd)).toHaveLength(1);
    const runs = await runsOf(task.id);
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(runs[1].resumed_from_run_id).toBe(runs[0].id);
    const messages = (completions().at(-1)!.body as Json).messages as Json[];
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['First question', 'Second question']);
    expect(messages).toContainEqual(expect.objectContaining({ role: 'assistant', content: 'One.' }));

    // Closed: the session is gone from this process (a prompt is refused); the task stays, resumable again.
    expect(await second.agent.request('session/close', { sessionId })).toEqual({});
    await expect(second.prompt(sessionId, 'after close')).rejects.toBeDefined();
    expect(await second.agent.request('session/resume', { sessionId, cwd, mcpServers: [] })).toEqual({});
    // A session that never had a prompt has nothing stored: it resumes as the empty session it was.
    const fresh = await second.newSession(editorDir());
    const third = await launch();
    expect(await third.agent.request('session/resume', { sessionId: fresh, cwd: '/tmp', mcpServers: [] })).toEqual({});
  });

  it("a gated tool call becomes request_permission: the editor's allow runs it, its reject does not and the session goes on", async () => {
    const editor = await launch();
    const cwd = editorDir();
    const sessionId = await editor.newSession(cwd);

    editor.answer = () => choose('allow_once');
    upstream.script(call('shell_exec', { command: 'echo allowed > allowed.txt' }));
    upstream.script({ content: 'Ran it.' });
    expect(await editor.prompt(sessionId, 'run the command')).toEqual({ stopReason: 'end_turn' });
    expect(editor.permissions).toHaveLength(1);
    expect(editor.permissions[0]).toMatchObject({
      sessionId,
      toolCall: { title: 'Run `echo allowed > allowed.txt`', kind: 'execute', rawInput: { command: 'echo allowed > allowed.txt' } },
      options: [
        { optionId: 'allow_once', kind: 'allow_once' },
        { optionId: 'reject_once', kind: 'reject_once' },
      ],
    });
    expect(readFileSync(join(cwd, 'allowed.txt'), 'utf8')).toBe('allowed\n');
    const [task] = await tasksIn(cwd);
    const approvals = (await operator.ok('GET', `/hecate/v1/tasks/${task.id}/approvals`)) as Json[];
    expect(approvals.map((a) => a.status)).toEqual(['approved']);

    const mark = editor.updates.length;
    editor.answer = () => choose('reject_once');
    upstream.script(call('shell_exec', { command: 'echo nope > rejected.txt' }));
    expect(await editor.prompt(sessionId, 'run another')).toEqual({ stopReason: 'end_turn' });
    expect(existsSync(join(cwd, 'rejected.txt'))).toBe(false);
    const rejected = editor.of(sessionId, mark).filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(rejected.at(-1)).toMatchObject({ status: 'failed' });
    const runs = await runsOf(task.id);
    expect(runs.at(-1)!.status).toBe('cancelled');

    // The rejected run's conversation carries on: the model is told the call was not run.
    upstream.script({ content: 'Understood.' });
    expect(await editor.prompt(sessionId, 'fine, skip it')).toEqual({ stopReason: 'end_turn' });
    const messages = (completions().at(-1)!.body as Json).messages as Json[];
    expect(messages.at(-2)).toMatchObject({ role: 'tool', content: expect.stringContaining('not run') });
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'fine, skip it' });
  });

  it('session/cancel mid-run answers cancelled and cancels the run in the API', async () => {
    const editor = await launch();
    const cwd = editorDir();
    const sessionId = await editor.newSession(cwd);
    upstream.script({ content: 'a long answer that streams slowly word by word until someone stops it', chunks: 40, chunkIntervalMs: 150 });
    const mark = editor.updates.length;
    const answer = editor.prompt(sessionId, 'tell me a long story');
    await editor.waitForUpdate((u) => u.sessionUpdate === 'agent_message_chunk', 'the first text chunk', mark);
    const cancelledAt = Date.now();
    await editor.cancel(sessionId);
    expect(await answer).toEqual({ stopReason: 'cancelled' });
    expect(Date.now() - cancelledAt).toBeLessThan(1_500);
    const [task] = await tasksIn(cwd);
    expect((await runsOf(task.id)).map((r) => r.status)).toEqual(['cancelled']);
  });

  it('cancel while the editor is being asked: the question is withdrawn, the run and its approval are cancelled, the tool never ran', async () => {
    const editor = await launch();
    const cwd = editorDir();
    const sessionId = await editor.newSession(cwd);
    let asked!: () => void;
    const question = new Promise<void>((r) => (asked = r));
    // An editor that never answers: the agent must stop waiting on cancel.
    editor.answer = () => {
      asked();
      return new Promise(() => undefined);
    };
    upstream.script(call('shell_exec', { command: 'echo late > late.txt' }));
    const answer = editor.prompt(sessionId, 'run it');
    await question;
    const cancelledAt = Date.now();
    await editor.cancel(sessionId);
    expect(await answer).toEqual({ stopReason: 'cancelled' });
    expect(Date.now() - cancelledAt).toBeLessThan(1_500);
    expect(existsSync(join(cwd, 'late.txt'))).toBe(false);
    const [task] = await tasksIn(cwd);
    expect((await runsOf(task.id)).map((r) => r.status)).toEqual(['cancelled']);
    expect(((await operator.ok('GET', `/hecate/v1/tasks/${task.id}/approvals`)) as Json[]).map((a) => a.status)).toEqual(['cancelled']);
  });

  it("the editor's MCP servers join the task's tools", async () => {
    const editor = await launch();
    const cwd = editorDir();
    const sessionId = await editor.newSession(cwd, [{ name: 'editor tools', command: process.execPath, args: [EVERYTHING], env: [] }]);
    upstream.script(call('mcp__editor_tools__echo', { message: 'from the editor' }));
    upstream.script({ content: 'Echoed.' });
    expect(await editor.prompt(sessionId, 'echo through the editor tool')).toEqual({ stopReason: 'end_turn' });
    const [task] = await tasksIn(cwd);
    expect(task.mcp_servers).toEqual([expect.objectContaining({ name: 'editor_tools', command: process.execPath, args: [EVERYTHING] })]);
    const updates = editor.of(sessionId);
    expect(updates.find((u) => u.sessionUpdate === 'tool_call')).toMatchObject({ title: 'echo (MCP editor_tools)', kind: 'other' });
    expect(updates.filter((u) => u.sessionUpdate === 'tool_call_update').at(-1)).toMatchObject({
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: expect.stringContaining('from the editor') } }],
    });
  });

  it('a failed run answers the prompt with an ACP error carrying the Hecate error type', async () => {
    const editor = await launch();
    const sessionId = await editor.newSession(editorDir());
    upstream.script({ content: '   ' });
    await expect(editor.prompt(sessionId, 'say nothing')).rejects.toMatchObject({ code: -32603, data: { type: 'blank_final_answer' } });
  });

  it("a folder outside the key's GATEWAY_WORKSPACE_ROOTS is refused at the first prompt, saying why", async () => {
    const editor = await launch();
    const sessionId = await editor.newSession(realpathSync(mkdtempSync(join(tmpdir(), 'hecate-acp-outside-'))));
    await expect(editor.prompt(sessionId, 'hello')).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('GATEWAY_WORKSPACE_ROOTS'),
      data: { type: 'invalid_request', status: 400 },
    });
    expect(completions()).toHaveLength(0);
  });

  it('a key the server refuses is an authentication error at session/new, and the key is never printed', async () => {
    const wrong = 'hk_this-key-does-not-exist-0123456789';
    const editor = await launch({ HECATE_API_KEY: wrong });
    await expect(editor.newSession(editorDir())).rejects.toMatchObject({ code: -32000, data: { type: 'unauthorized' } });
    await editor.close();
    expect(editor.out.stdout + editor.out.stderr).not.toContain(wrong);
  });

  it('without HECATE_BASE_URL the agent exits non-zero with a clear line on stderr and nothing on stdout', async () => {
    const agent = spawnAcpAgent({ HECATE_API_KEY: apiKey });
    expect(await agent.exited).toBe(1);
    expect(agent.out.stderr).toContain('HECATE_BASE_URL is required');
    expect(agent.out.stdout).toBe('');
    expect(agent.out.stderr).not.toContain(apiKey);
  });
});
