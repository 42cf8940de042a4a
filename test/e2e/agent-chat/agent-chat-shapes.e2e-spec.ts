import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterEnv } from '../../support/acp-agents';
import { useStack } from '../../support/harness';
import { waitFor } from '../../support/infra';
import type { FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import { SseReader } from '../../support/sse';
import type { ServerProcess } from '../../support/server-process';
import { Client, Json, TOKEN } from '../tasks/tasks-harness';

/** Names git C-quotes in a diff (a quote, non-ASCII, a tab, a newline) and one it leaves bare with a space. */
const ODD = ['a"b.txt', 'é.txt', 'sp ace.txt', 'tab\there.txt', 'new\nline.txt'];

/**
 * Issue 27's smaller Agent Chat shapes on the built server (embedded, and an api with a worker; the fault ACP agent as
 * an External Agent): every runtime's reply carries span_id, started_at and duration_ms (agent and External Agent
 * replies their workspace); a turn's changed files are there as soon as its answer (POST or the stream's `done`)
 * arrives; names git quotes are listed and served by their real names.
 */
describe.each(['embedded', 'scaled'] as const)('agent chat message shapes and changed files (%s)', (mode) => {
  // Scaled: an api and a worker: the turn runs on the worker, the api answers (and serves the files) from Postgres.
  const suite = useStack({
    mode,
    token: TOKEN,
    workers: mode === 'scaled' ? 1 : 0,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) =>
      adapterEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'auto',
        GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
      }),
  });
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let c: Client;

  beforeAll(() => {
    upstream = suite.upstream;
    server = suite.stack.apis[0];
    c = new Client(server.url);
  });
  beforeEach(() => upstream.reset());

  const sessions = '/hecate/v1/agent-chat/sessions';
  const say = async (id: string, body: Json): Promise<Json> => {
    const r = await c.call('POST', `${sessions}/${id}/messages`, body);
    expect(r.status).toBe(200);
    return r.body.data as Json;
  };
  const lastReply = (s: Json): Json => (s.messages as Json[]).filter((m) => m.role === 'assistant').at(-1)!;
  const gitRepo = (owned = false): { dir: string; git: (...a: string[]) => Buffer } => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-shapes-git-'));
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'safe.directory=*', ...args], { cwd: dir });
    git('init', '-q');
    writeFileSync(join(dir, 'README.md'), 'hello\n');
    git('add', '-A');
    git('commit', '-qm', 'init');
    return { dir: owned ? sandboxOwned(dir) : dir, git };
  };
  /** The timing and trace fields every ended reply has, whatever its runtime. */
  const expectRunIdentity = (m: Json) => {
    expect(m.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(m.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(m.request_id).toEqual(expect.any(String));
    expect(m.started_at).toEqual(expect.any(String));
    expect(m.completed_at).toEqual(expect.any(String));
    expect(m.duration_ms).toBe(Date.parse(m.completed_at as string) - Date.parse(m.started_at as string));
    expect(m.duration_ms).toBeGreaterThanOrEqual(0);
  };

  it('model, agent and External Agent replies carry span_id, started_at and duration_ms; agent and External Agent replies their workspace', async () => {
    const model = (await c.ok('POST', sessions, { runtime_kind: 'model', model: 'gpt-4o-mini' })).id as string;
    upstream.script({ content: 'hi there', chunks: 4, chunkIntervalMs: 30 });
    const m = lastReply(await say(model, { content: 'hello' }));
    expect(m).toMatchObject({ runtime_kind: 'model', status: 'completed', content: 'hi there' });
    expectRunIdentity(m);
    expect(m.duration_ms).toBeGreaterThanOrEqual(90); // three gaps of 30 ms between the upstream's chunks
    expect(m.workspace).toBeUndefined();
    // While it runs the reply is `running` with its start (no duration yet).
    upstream.script({ content: 'one two three four five six', chunks: 6, chunkIntervalMs: 250 });
    expect((await c.call('POST', `${sessions}/${model}/messages`, { content: 'slowly', wait: false })).status).toBe(202);
    const running = await waitFor(
      async () => {
        const r = lastReply(await c.ok('GET', `${sessions}/${model}`));
        return r.content ? r : undefined;
      },
      { timeoutMs: 15_000, what: 'a partial reply' },
    );
    expect(running).toMatchObject({ status: 'running', started_at: expect.any(String), span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(running.duration_ms).toBeUndefined();
    expect(running.activities.map((x: Json) => x.type)).toEqual(['started', 'running']);
    const ended = await waitFor(
      async () => {
        const r = lastReply(await c.ok('GET', `${sessions}/${model}`));
        return r.status === 'completed' ? r : undefined;
      },
      { timeoutMs: 15_000, what: 'the reply to end' },
    );
    expect(ended.started_at).toBe(running.started_at);
    expect(ended.duration_ms).toBeGreaterThanOrEqual(1000); // five gaps of 250 ms between the upstream's chunks

    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-shapes-ws-')));
    upstream.script({ content: 'agent answer' });
    const a = lastReply(await say(model, { content: 'with tools', runtime_kind: 'agent', workspace: ws }));
    expect(a).toMatchObject({ runtime_kind: 'agent', status: 'completed', content: 'agent answer', workspace: ws });
    expectRunIdentity(a);

    const extWs = sandboxOwned(realpathSync(mkdtempSync(join(tmpdir(), 'hecate-shapes-ext-'))));
    const ext = (await c.ok('POST', sessions, { runtime_kind: 'external_agent', adapter_id: 'fault', workspace: extWs })).id as string;
    const e = lastReply(await say(ext, { content: 'echo shapes' }));
    expect(e).toMatchObject({ runtime_kind: 'external_agent', status: 'completed', content: 'echo: echo shapes', workspace: extWs, adapter_id: 'fault' });
    expectRunIdentity(e);
    expect(new Set([m.span_id, a.span_id, e.span_id]).size).toBe(3);

    // The same fields on the transcript read later and on the stream's settled message.
    const again = lastReply(await c.ok('GET', `${sessions}/${ext}`));
    expect(again).toMatchObject({ span_id: e.span_id, workspace: extWs, started_at: e.started_at, duration_ms: e.duration_ms });
    upstream.script({ content: 'streamed' });
    const sse = new SseReader(`${server.url}${sessions}/${model}/messages`, { body: { content: 'again', runtime_kind: 'model', stream: true }, token: TOKEN });
    await sse.done;
    const settled = sse.events.find((x) => x.event === 'message')!.data as Json;
    expectRunIdentity(settled);
  });

  it('an agent turn: files right after the POST answer and after the stream’s done, by their real names; per-file diffs and revert of quoted names', async () => {
    const { dir, git } = gitRepo();
    const id = (await c.ok('POST', sessions, { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace: dir })).id as string;
    for (const name of ODD) upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: name, content: 'one line\n' } }] });
    upstream.script({ content: 'wrote them' });
    const reply = lastReply(await say(id, { content: 'write the odd files' }));
    expect(reply.status).toBe('completed');
    const base = `${sessions}/${id}/messages/${reply.id}`;
    const files = await c.call('GET', `${base}/files`);
    expect(files.status).toBe(200);
    expect(files.body).toEqual({
      object: 'agent_chat_changed_files',
      data: expect.arrayContaining(ODD.map((path) => ({ path, additions: 1, deletions: 0, status: 'added' }))),
    });
    expect((files.body.data as Json[]).map((f) => f.path).sort()).toEqual([...ODD].sort());
    expect(reply.diff_stat).toContain('5 files changed, 5 insertions(+)');
    for (const name of ODD) {
      const one = await c.call('GET', `${base}/files/${encodeURIComponent(name)}`);
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({ path: name, additions: 1, status: 'added' });
      expect(one.body.data.diff).toMatch(/^diff --git "?a\/.*\nnew file mode 100644\n/);
    }
    expect((await c.call('GET', `${base}/files/${encodeURIComponent('"a\\"b.txt"')}`)).status).toBe(404);

    // Revert by real names: the quoted ones go, the rest stay.
    const reverted = await c.call('POST', `${base}/revert`, { paths: ['a"b.txt', 'é.txt', 'tab\there.txt'] });
    expect(reverted.status).toBe(200);
    expect(reverted.body.data).toMatchObject({ reverted: true, paths: ['a"b.txt', 'é.txt', 'tab\there.txt'] });
    expect((reverted.body.data.files as Json[]).map((f) => f.path).sort()).toEqual(['new\nline.txt', 'sp ace.txt']);
    for (const gone of ['a"b.txt', 'é.txt', 'tab\there.txt']) expect(existsSync(join(dir, gone))).toBe(false);
    expect(readFileSync(join(dir, 'sp ace.txt'), 'utf8')).toBe('one line\n');
    expect(git('status', '--porcelain', '-z').toString().split('\0').filter(Boolean).sort()).toEqual(['?? new\nline.txt', '?? sp ace.txt']);

    // Streamed: a client that reads the files as soon as `done` arrives sees them (and `done`'s session shows the stat).
    upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'streamed "x".txt', content: 'x\n' } }] });
    upstream.script({ content: 'one more' });
    const sse = new SseReader(`${server.url}${sessions}/${id}/messages`, { body: { content: 'one more file', stream: true }, token: TOKEN });
    await sse.done;
    const done = sse.events.at(-1)!;
    expect(done.event).toBe('done');
    const streamed = lastReply(done.data.data as Json);
    expect(streamed).toMatchObject({ status: 'completed', diff_stat: expect.stringContaining('streamed "x".txt') });
    expect(await c.ok('GET', `${sessions}/${id}/messages/${streamed.id}/files`)).toEqual([
      { path: 'streamed "x".txt', additions: 1, deletions: 0, status: 'added' },
    ]);
  });

  it('a cancelled agent turn keeps the files it changed before the cancel: listed, served and revertible', async () => {
    const { dir } = gitRepo();
    const id = (await c.ok('POST', sessions, { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace: dir })).id as string;
    upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'before cancel.txt', content: 'written\n' } }] });
    upstream.script({ content: 'a b c d e f g h i j k l m n o p q r s t', chunks: 20, chunkIntervalMs: 300 });
    const started = await c.call('POST', `${sessions}/${id}/messages`, { content: 'write, then talk slowly', wait: false });
    expect(started.status).toBe(202);
    await waitFor(async () => (existsSync(join(dir, 'before cancel.txt')) ? true : undefined), { timeoutMs: 15_000, what: 'the file written' });
    expect((await c.call('POST', `${sessions}/${id}/cancel`)).status).toBe(202);
    const reply = await waitFor(
      async () => {
        const m = lastReply(await c.ok('GET', `${sessions}/${id}`));
        return m.status === 'cancelled' ? m : undefined;
      },
      { timeoutMs: 15_000, what: 'the turn cancelled' },
    );
    expect(reply.diff_stat).toContain('before cancel.txt');
    const base = `${sessions}/${id}/messages/${reply.id}`;
    expect(await c.ok('GET', `${base}/files`)).toEqual([{ path: 'before cancel.txt', additions: 1, deletions: 0, status: 'added' }]);
    expect((await c.ok('POST', `${base}/revert`, { paths: [] })).files).toEqual([]);
    expect(existsSync(join(dir, 'before cancel.txt'))).toBe(false);
  });

  it('an External Agent turn: files right after the POST answer, quoted names decoded, per-file diffs found', async () => {
    const { dir } = gitRepo(true);
    const id = (await c.ok('POST', sessions, { runtime_kind: 'external_agent', adapter_id: 'fault', workspace: dir })).id as string;
    const reply = lastReply(await say(id, { content: `writejson ${JSON.stringify(Object.fromEntries(ODD.map((n) => [n, 'one line\n'])))}` }));
    expect(reply).toMatchObject({ status: 'completed', content: 'wrote 5 files' });
    expect(reply.activities.map((a: Json) => a.type)).toEqual(['started', 'tool_call', 'approval', 'files_changed', 'completed']);
    const base = `${sessions}/${id}/messages/${reply.id}`;
    const files = (await c.ok('GET', `${base}/files`)) as unknown as Json[];
    expect(files.map((f) => [f.path, f.status]).sort()).toEqual(ODD.map((n) => [n, 'added']).sort());
    for (const name of ODD) expect((await c.ok('GET', `${base}/files/${encodeURIComponent(name)}`)).path).toBe(name);
  });
});
