import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterEnv, FAULT_AGENT_PROCESS } from '../../support/acp-agents';
import { Client as Pg } from 'pg';
import type { ScratchDatabase } from '../../support/infra';
import { waitFor } from '../../support/infra';
import { processesMatching } from '../../support/mcp-servers';
import type { ServerProcess } from '../../support/server-process';
import { Client, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

const LEASE_MS = 2000;

/**
 * External Agent sessions (seed 003 `runtime_kind: external_agent`, issue 16) on real processes: an api and two
 * workers, the ACP fault agent as the adapter (operator-defined), approval mode `auto`. The adapter runs on the worker
 * holding the session's lease; its failures end the turn `failed` with the transcript intact; kill -9 of that worker
 * moves the session to the other one (restored with session/load, or reset with a recap when the agent cannot load).
 */
describe('external agent chat (scaled: api + two workers)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let api: ServerProcess;
  let workers: ServerProcess[];
  let c: Client;

  beforeAll(async () => {
    const s = await scaledEnv(
      adapterEnv({
        GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'auto',
        GATEWAY_AGENT_ADAPTER_MAX_MESSAGE_BYTES: String(1024 * 1024),
        GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
        GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
        GATEWAY_QUEUE_LOCK_MS: '2000',
      }),
    );
    db = s.db;
    env = s.env;
    api = await procs.start('api', env);
    workers = await Promise.all([procs.start('worker', env), procs.start('worker', env)]);
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  const gitWorkspace = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-ext-ws-'));
    execFileSync('git', ['init', '-q', dir]);
    return dir;
  };
  const create = async (adapterId: string, workspace = gitWorkspace()) =>
    c.call('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: adapterId, workspace });
  const say = async (id: string, content: string): Promise<Json> => {
    const r = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content });
    expect(r.status).toBe(200);
    return r.body.data as Json;
  };
  const lastAssistant = (session: Json): Json => (session.messages as Json[]).filter((m) => m.role === 'assistant').at(-1)!;
  /** The worker process holding the session's adapter lease (LEASE_OWNER is host:pid:random). */
  const holderOf = async (id: string): Promise<ServerProcess> => {
    const pg = new Pg({ connectionString: db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ adapter_owner: string }>(`SELECT adapter_owner FROM agent_chat_sessions WHERE id = $1`, [id]);
      const pid = Number(rows[0].adapter_owner.split(':')[1]);
      return workers.find((w) => w.proc.pid === pid)!;
    } finally {
      await pg.end();
    }
  };

  it('creates a session (initialize + session/new on a worker) and runs a whole turn: streamed text, transcript fields', async () => {
    const created = await create('fault');
    expect(created.status).toBe(200);
    const s = created.body.data as Json;
    expect(s).toMatchObject({
      runtime_kind: 'external_agent',
      adapter_id: 'fault',
      driver_kind: 'acp',
      adapter_state: 'ready',
      native_session_id: expect.stringMatching(/^fault-/),
    });
    const after = await say(s.id, 'hello there');
    const reply = lastAssistant(after);
    expect(reply).toMatchObject({
      role: 'assistant',
      status: 'completed',
      content: 'echo: hello there',
      runtime_kind: 'external_agent',
      adapter_id: 'fault',
      adapter_name: 'Fault Agent',
      driver_kind: 'acp',
      native_session_id: s.native_session_id,
      cost_mode: 'external',
      run_id: expect.stringMatching(/^agent_run_/),
      duration_ms: expect.any(Number),
    });
    expect(JSON.parse(reply.raw_output as string)).toEqual(expect.arrayContaining([expect.objectContaining({ sessionUpdate: 'agent_message_chunk' })]));
    expect((reply.activities as Json[]).map((a) => a.type)).toEqual(['started', 'completed']);
    // The next turn reaches the same native session (the agent remembers the earlier prompt).
    const again = lastAssistant(await say(s.id, 'history'));
    expect(again.content).toBe('history: hello there');
  });

  it('an auto-approved tool call writes in the workspace: tool activity, the diff captured, changed files listed', async () => {
    const ws = gitWorkspace();
    const s = (await create('fault', ws)).body.data as Json;
    const reply = lastAssistant(await say(s.id, 'write notes.txt remember the milk'));
    expect(reply).toMatchObject({ status: 'completed', content: 'wrote notes.txt', diff_stat: expect.stringContaining('1 file') });
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('remember the milk\n');
    const types = (reply.activities as Json[]).map((a) => a.type);
    expect(types).toEqual(['started', 'tool_call', 'approval', 'files_changed', 'completed']);
    expect((reply.activities as Json[])[2]).toMatchObject({ status: 'approved', detail: 'default_mode: auto' });
    const files = await c.call('GET', `/hecate/v1/agent-chat/sessions/${s.id}/messages/${reply.id}/files`);
    expect(files.status).toBe(200);
    expect(JSON.stringify(files.body)).toContain('notes.txt');
  });

  it('adapter failures are failed turns with the transcript intact; the next turn starts the adapter again', async () => {
    const s = (await create('fault')).body.data as Json;
    await say(s.id, 'first words');
    const crashed = lastAssistant(await say(s.id, 'crash'));
    expect(crashed).toMatchObject({
      status: 'failed',
      content: 'about to crash',
      error: { type: 'adapter_exited', message: expect.stringContaining('exited with code 3') },
    });
    // Restarted and restored with session/load: the native session still knows the earlier prompts.
    const back = lastAssistant(await say(s.id, 'history'));
    expect(back).toMatchObject({ status: 'completed', native_session_id: s.native_session_id });
    expect(back.content).toBe('history: first words | crash');
    expect((back.activities as Json[]).map((a) => a.type)).toContain('native_session_restored');

    const garbage = lastAssistant(await say(s.id, 'garbage'));
    expect(garbage).toMatchObject({ status: 'failed', error: { type: 'adapter_not_acp', message: expect.stringContaining('this is not json') } });
    const huge = lastAssistant(await say(s.id, 'huge 2'));
    expect(huge).toMatchObject({ status: 'failed', error: { type: 'adapter_message_too_large' } });
    const fine = lastAssistant(await say(s.id, 'still here'));
    expect(fine).toMatchObject({ status: 'completed', content: 'echo: still here' });
    const all = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}`)).messages as Json[];
    expect(all.map((m) => `${m.role}:${m.status}`)).toEqual([
      'user:completed',
      'assistant:completed',
      'user:completed',
      'assistant:failed',
      'user:completed',
      'assistant:completed',
      'user:completed',
      'assistant:failed',
      'user:completed',
      'assistant:failed',
      'user:completed',
      'assistant:completed',
    ]);
  });

  it('cancel mid-turn sends session/cancel: the turn ends cancelled with its partial text', async () => {
    const s = (await create('fault')).body.data as Json;
    const started = await c.call('POST', `/hecate/v1/agent-chat/sessions/${s.id}/messages`, { content: 'slow 100 abcdefghijklmnopqrstuvwxyz', wait: false });
    expect(started.status).toBe(202);
    await waitFor(async () => lastAssistant(await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}`)).content.length >= 3, { timeoutMs: 15_000 });
    const cancel = await c.call('POST', `/hecate/v1/agent-chat/sessions/${s.id}/cancel`);
    expect(cancel.status).toBe(202);
    await waitFor(async () => lastAssistant(await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}`)).status === 'cancelled', { timeoutMs: 15_000 });
    const reply = lastAssistant(await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}`));
    expect(reply.content.length).toBeLessThan(26);
    expect('abcdefghijklmnopqrstuvwxyz'.startsWith(reply.content as string)).toBe(true);
    expect(lastAssistant(await say(s.id, 'after cancel')).content).toBe('echo: after cancel');
  });

  it('create errors: unknown adapter 400, no workspace 400, an adapter that fails auth 502 and leaves no session', async () => {
    const unknown = await create('nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.type).toBe('agent_chat.adapter_not_found');
    const noWs = await c.call('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: 'fault' });
    expect(noWs.status).toBe(400);
    expect(noWs.body.error.type).toBe('agent_chat.workspace_required');
    const before = ((await c.ok('GET', '/hecate/v1/agent-chat/sessions')) as unknown as Json[]).length;
    const auth = await create('fault_auth');
    expect(auth.status).toBe(502);
    expect(auth.body.error).toMatchObject({ type: 'agent_chat.adapter_start_failed', adapter_id: 'fault_auth', message: expect.stringMatching(/auth/i) });
    expect(((await c.ok('GET', '/hecate/v1/agent-chat/sessions')) as unknown as Json[]).length).toBe(before);
  });

  it('delete and close end the adapter process group; no process is left behind', async () => {
    const tag = gitWorkspace();
    const s = (await create('fault', tag)).body.data as Json;
    await say(s.id, 'hi');
    expect(processesMatching(FAULT_AGENT_PROCESS)).toBeGreaterThan(0);
    const closed = await c.call('POST', `/hecate/v1/agent-chat/sessions/${s.id}/close`);
    expect(closed.status).toBe(200);
    const del = await c.call('DELETE', `/hecate/v1/agent-chat/sessions/${s.id}`);
    expect([200, 204]).toContain(del.status);
    // Every session of this suite so far, deleted: all their adapters go.
    for (const session of (await c.ok('GET', '/hecate/v1/agent-chat/sessions')) as unknown as Json[])
      await c.call('DELETE', `/hecate/v1/agent-chat/sessions/${session.id}`);
    await waitFor(() => processesMatching(FAULT_AGENT_PROCESS) === 0, { timeoutMs: 15_000 });
  });

  it('kill -9 of the worker holding a session: the next turn runs on another worker (loaded, or reset with a recap)', async () => {
    const loadable = (await create('fault')).body.data as Json;
    await say(loadable.id, 'remember alpha');
    const first = await holderOf(loadable.id);
    await first.stop('SIGKILL');
    workers = [...workers.filter((w) => w !== first), await procs.start('worker', env)];
    const loaded = lastAssistant(await say(loadable.id, 'history'));
    expect(loaded).toMatchObject({ status: 'completed', content: 'history: remember alpha', native_session_id: loadable.native_session_id });
    expect(workers).toContain(await holderOf(loadable.id));

    const resettable = (await create('fault_noload')).body.data as Json;
    await say(resettable.id, 'remember beta');
    const second = await holderOf(resettable.id);
    await second.stop('SIGKILL');
    workers = [...workers.filter((w) => w !== second), await procs.start('worker', env)];
    const reset = lastAssistant(await say(resettable.id, 'what did I say'));
    expect(reset).toMatchObject({ status: 'completed', native_session_reset: true });
    // The agent got a recap of the transcript with the new prompt (the fault agent echoes all of it).
    expect(reset.content).toContain('User: remember beta');
    expect(reset.content).toContain('what did I say');
    expect(reset.native_session_id).not.toBe(resettable.native_session_id);
    expect((reset.activities as Json[]).map((a) => a.type)).toContain('native_session_reset');
    // The second kill may have taken the first session's adapter too (both sessions on one worker): its next turn
    // brings it back, loaded again, on a live worker.
    expect(lastAssistant(await say(loadable.id, 'history'))).toMatchObject({ status: 'completed', native_session_id: loadable.native_session_id });
    // The killed workers' adapters died with them: one process per live session, nothing orphaned.
    await waitFor(() => processesMatching(FAULT_AGENT_PROCESS) === 2, { timeoutMs: 10_000, what: 'one adapter process per live session' });
  });
});
