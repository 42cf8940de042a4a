import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterEnv, FAULT_AGENT_PROCESS } from '../../support/acp-agents';
import { Client as Pg } from 'pg';
import type { ScratchDatabase } from '../../support/infra';
import { waitFor } from '../../support/infra';
import { processesMatching } from '../../support/mcp-servers';
import type { ServerProcess } from '../../support/server-process';
import { sandboxOwned } from '../../support/sandbox';
import { SseReader } from '../../support/sse';
import { Client, Json, Processes, scaledEnv, TOKEN } from '../tasks/tasks-harness';

const LEASE_MS = 2000;
const APPROVAL_TIMEOUT_S = 4;
const TURN_TIMEOUT_S = 8;

/**
 * External Agent sessions (docs/api.md §4 `runtime_kind: external_agent`) on real processes: an api and two
 * workers, the ACP fault agent as the adapter (operator-defined), approval mode `prompt` (4 s timeout). The adapter runs
 * on the worker holding the session's lease; its permission requests wait for an operator on the approvals API (or a
 * grant); its failures end the turn `failed` with the transcript intact; kill -9 of that worker moves the session to
 * the other one (restored with session/load, or reset with a recap when the agent cannot load).
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
        GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'prompt',
        GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT: `${APPROVAL_TIMEOUT_S}s`,
        GATEWAY_AGENT_ADAPTER_MAX_MESSAGE_BYTES: String(1024 * 1024),
        GATEWAY_AGENT_ADAPTER_TURN_TIMEOUT: `${TURN_TIMEOUT_S}s`,
        GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
        GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
        GATEWAY_QUEUE_LOCK_MS: '2000',
      }),
    );
    db = s.db;
    env = s.env;
    [api, ...workers] = await Promise.all([procs.start('api', env), procs.start('worker', env), procs.start('worker', env)]);
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  const gitWorkspace = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-ext-ws-'));
    execFileSync('git', ['init', '-q', dir]);
    // The adapter runs as the sandbox uid, never root: its workspace must be the sandbox uid's to write in it.
    return sandboxOwned(dir);
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

  const base = (id: string) => `/hecate/v1/agent-chat/sessions/${id}`;
  const approvals = async (id: string, status?: string): Promise<Json[]> =>
    (await c.ok('GET', `${base(id)}/approvals${status ? `?status=${status}` : ''}`)) as unknown as Json[];
  const pendingOf = (id: string): Promise<Json> => waitFor(async () => (await approvals(id, 'pending'))[0], { timeoutMs: 15_000, what: 'a pending approval' });
  const begin = async (id: string, content: string) => {
    const r = await c.call('POST', `${base(id)}/messages`, { content, wait: false });
    expect(r.status).toBe(202);
  };
  const settled = (id: string): Promise<Json> =>
    waitFor(
      async () => {
        const m = lastAssistant(await c.ok('GET', base(id)));
        return ['completed', 'failed', 'cancelled'].includes(m.status as string) ? m : undefined;
      },
      { timeoutMs: 20_000, what: 'the turn to settle' },
    );
  const resolve = (id: string, approvalId: string, body: Json) => c.call('POST', `${base(id)}/approvals/${approvalId}/resolve`, body);

  it('a tool call asks permission: pending on the approvals API and the session stream, approved through the API; the diff captured', async () => {
    const ws = gitWorkspace();
    const s = (await create('fault', ws)).body.data as Json;
    const sse = new SseReader(`${api.url}${base(s.id)}/stream`, { token: TOKEN });
    await sse.opened;
    await begin(s.id, 'write notes.txt remember the milk');
    const pending = await pendingOf(s.id);
    expect(pending).toMatchObject({
      id: expect.stringMatching(/^appr_/),
      session_id: s.id,
      adapter_id: 'fault',
      tool_kind: 'file_write',
      tool_name: 'Write notes.txt',
      tool_call_id: 'call_write',
      status: 'pending',
      scope_choices: ['once', 'session', 'workspace_tool', 'adapter_tool'],
      options: [
        { option_id: 'allow', name: 'Allow', kind: 'allow_once' },
        { option_id: 'allow-always', name: 'Always allow', kind: 'allow_always' },
        { option_id: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
    });
    const requested = await sse.until((e) => e.event === 'approval.requested');
    expect(requested.data).toMatchObject({
      approval_id: pending.id,
      session_id: s.id,
      adapter_id: 'fault',
      tool_kind: 'file_write',
      tool_name: 'Write notes.txt',
      scope_choices: ['once', 'session', 'workspace_tool', 'adapter_tool'],
      expires_at: pending.expires_at,
    });
    expect(existsSync(join(ws, 'notes.txt'))).toBe(false);
    const ok = await resolve(s.id, pending.id as string, { decision: 'approve', scope: 'once', note: 'fine' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ status: 'approved', decision: 'approve', scope: 'once', path: 'operator', selected_option: 'allow', note: 'fine' });
    const reply = await settled(s.id);
    expect(reply).toMatchObject({ status: 'completed', content: 'wrote notes.txt', diff_stat: expect.stringContaining('1 file') });
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('remember the milk\n');
    expect((reply.activities as Json[]).map((a) => a.type)).toEqual(['started', 'tool_call', 'approval', 'files_changed', 'completed']);
    expect((reply.activities as Json[])[2]).toMatchObject({ status: 'approved', detail: 'operator', approval_id: pending.id });
    const resolved = await sse.until((e) => e.event === 'approval.resolved');
    expect(resolved.data).toMatchObject({
      approval_id: pending.id,
      session_id: s.id,
      turn_id: requested.data.turn_id,
      status: 'approved',
      decision: 'approve',
      scope: 'once',
      path: 'operator',
      selected_option: 'allow',
    });
    // In order with the turn's other frames (the api wrote `approval.resolved` as the decision committed, before the
    // agent went on): requested, resolved, then what the agent did after — once each.
    await sse.done;
    const frames = sse.events.filter((e) => e.id !== undefined);
    const iRequested = frames.indexOf(requested);
    const iResolved = frames.indexOf(resolved);
    const iAfter = frames.findIndex((e) => e.event === 'delta' && e.data.content === 'wrote notes.txt');
    expect(iRequested).toBeGreaterThan(-1);
    expect(iResolved).toBeGreaterThan(iRequested);
    expect(iAfter).toBeGreaterThan(iResolved);
    expect(frames.filter((e) => e.event?.startsWith('approval.')).map((e) => e.event)).toEqual(['approval.requested', 'approval.resolved']);
    // A client that saw the turn up to before the request resumes later and gets both, with the same ids.
    const resumed = new SseReader(`${api.url}${base(s.id)}/stream`, { token: TOKEN, headers: { 'last-event-id': frames[iRequested - 1].id! } });
    await resumed.done;
    const replayed = resumed.events.filter((e) => e.id !== undefined);
    expect(replayed.map((e) => [e.id, e.event])).toEqual(frames.slice(iRequested).map((e) => [e.id, e.event]));
    expect(replayed[0].data).toEqual(requested.data);
    // Decided once: a second decision is a conflict; the row is there by id; unknown ids are 404.
    const again = await resolve(s.id, pending.id as string, { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'agent_chat.approval_not_pending', approval_status: 'approved', path: 'operator' });
    expect(await c.ok('GET', `${base(s.id)}/approvals/${pending.id}`)).toMatchObject({ id: pending.id, status: 'approved' });
    expect((await c.call('GET', `${base(s.id)}/approvals/appr_nope`)).status).toBe(404);
    expect((await c.call('POST', `${base(s.id)}/approvals/${pending.id}/resolve`, { decision: 'maybe' })).status).toBe(400);
    const files = await c.call('GET', `${base(s.id)}/messages/${reply.id}/files`);
    expect(files.status).toBe(200);
    expect(JSON.stringify(files.body)).toContain('notes.txt');
  });

  it('deny, bad choices, grants: a session grant short-circuits the next request; the most specific grant wins; revoking asks again', async () => {
    const ws = gitWorkspace();
    const a = (await create('fault', ws)).body.data as Json;
    await begin(a.id, 'write no.txt nope');
    let p = await pendingOf(a.id);
    const badScope = await resolve(a.id, p.id as string, { decision: 'approve', scope: 'forever' });
    expect(badScope.status).toBe(400);
    const badOption = await resolve(a.id, p.id as string, { decision: 'approve', selected_option: 'reject' });
    expect(badOption.status).toBe(400);
    expect(badOption.body.error.type).toBe('agent_chat.approval_choice_invalid');
    expect((await resolve(a.id, p.id as string, { decision: 'reject' })).body.data).toMatchObject({
      status: 'denied',
      decision: 'deny',
      selected_option: 'reject',
    });
    expect(await settled(a.id)).toMatchObject({ status: 'completed', content: 'not allowed to write no.txt' });
    expect(existsSync(join(ws, 'no.txt'))).toBe(false);

    // Allow file writes for the rest of this session: the next write is decided by the grant, nobody asked.
    await begin(a.id, 'write one.txt 1');
    p = await pendingOf(a.id);
    const granted = await resolve(a.id, p.id as string, { decision: 'approve', scope: 'session' });
    expect(granted.body.data).toMatchObject({ status: 'approved', scope: 'session', grant_id: expect.stringMatching(/^grant_/) });
    await settled(a.id);
    expect(lastAssistant(await say(a.id, 'write two.txt 2'))).toMatchObject({ status: 'completed', content: 'wrote two.txt' });
    const byGrant = (await approvals(a.id)).at(-1)!;
    expect(byGrant).toMatchObject({ status: 'approved', path: 'grant', scope: 'session', grant_id: granted.body.data.grant_id, tool_kind: 'file_write' });

    // Shell commands: denied for this adapter everywhere, allowed in session b only — b's session grant wins there.
    await begin(a.id, 'run rm -rf build');
    p = await pendingOf(a.id);
    const denyAll = await resolve(a.id, p.id as string, { decision: 'deny', scope: 'adapter_tool' });
    expect(denyAll.body.data).toMatchObject({ status: 'denied', scope: 'adapter_tool' });
    expect(await settled(a.id)).toMatchObject({ content: 'command denied' });
    const b = (await create('fault')).body.data as Json;
    expect(lastAssistant(await say(b.id, 'run ls'))).toMatchObject({ content: 'command denied' });
    expect((await approvals(b.id)).at(-1)).toMatchObject({ status: 'denied', path: 'grant', scope: 'adapter_tool' });
    const grants = (await c.ok('GET', '/hecate/v1/agent-chat/grants?adapter_id=fault')) as unknown as Json[];
    expect(grants.map((g) => `${g.scope}:${g.tool_kind}:${g.decision}`).sort()).toEqual(['adapter_tool:shell_exec:deny', 'session:file_write:allow']);
    const adapterGrant = grants.find((g) => g.scope === 'adapter_tool')!;
    expect(adapterGrant).toMatchObject({ adapter_id: 'fault', session_id: null, workspace: null, approval_id: denyAll.body.data.id });
    // Revoked: the next command asks again; b answers with a session allow that then beats nothing but itself.
    expect((await c.call('DELETE', `/hecate/v1/agent-chat/grants/${adapterGrant.id}`)).status).toBe(200);
    expect((await c.call('DELETE', `/hecate/v1/agent-chat/grants/${adapterGrant.id}`)).status).toBe(404);
    await begin(b.id, 'run make');
    p = await pendingOf(b.id);
    await resolve(b.id, p.id as string, { decision: 'approve', scope: 'session' });
    expect(await settled(b.id)).toMatchObject({ content: 'ran make' });
    // A deny for the whole adapter made later does not override b's own (more specific) session allow.
    await begin(a.id, 'run rm -rf dist');
    p = await pendingOf(a.id);
    await resolve(a.id, p.id as string, { decision: 'deny', scope: 'adapter_tool' });
    await settled(a.id);
    expect(lastAssistant(await say(b.id, 'run make again'))).toMatchObject({ content: 'ran make again' });
    for (const g of (await c.ok('GET', '/hecate/v1/agent-chat/grants')) as unknown as Json[]) await c.call('DELETE', `/hecate/v1/agent-chat/grants/${g.id}`);
  });

  it('an unanswered request times out (answered cancelled); cancelling the turn answers its request request_cancelled; an operator can withdraw one', async () => {
    const s = (await create('fault')).body.data as Json;
    await begin(s.id, 'write late.txt x');
    const p = await pendingOf(s.id);
    const reply = await settled(s.id);
    expect(reply).toMatchObject({ status: 'completed', content: 'not allowed to write late.txt' });
    expect(await c.ok('GET', `${base(s.id)}/approvals/${p.id}`)).toMatchObject({ status: 'timed_out', path: 'timeout', decision: null });
    const late = await resolve(s.id, p.id as string, { decision: 'approve' });
    expect(late.status).toBe(409);

    await begin(s.id, 'write never.txt x');
    const q = await pendingOf(s.id);
    expect((await c.call('POST', `${base(s.id)}/cancel`)).status).toBe(202);
    expect(await settled(s.id)).toMatchObject({ status: 'cancelled' });
    expect(await c.ok('GET', `${base(s.id)}/approvals/${q.id}`)).toMatchObject({ status: 'cancelled', path: 'request_cancelled' });

    await begin(s.id, 'run deploy');
    const r = await pendingOf(s.id);
    const withdrawn = await c.call('POST', `${base(s.id)}/approvals/${r.id}/cancel`);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.data).toMatchObject({ status: 'cancelled', path: 'operator' });
    expect(await settled(s.id)).toMatchObject({ status: 'completed', content: 'command denied' });
    expect((await c.ok('GET', '/hecate/v1/system/stats')).agent_adapter_approval_mode).toBe('prompt');
  });

  it('adapter failures (a crash, stdout that is not ACP, a 50 MB update, no answer within the turn ceiling) are failed turns with the transcript intact; the next turn starts the adapter again', async () => {
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
    // A 50 MB update (the limit here is 1 MB): refused as it arrives, never buffered whole.
    const huge = lastAssistant(await say(s.id, 'huge 50'));
    expect(huge).toMatchObject({ status: 'failed', error: { type: 'adapter_message_too_large' } });
    // An agent that never answers: the turn ceiling ends it, the process goes, the worker is free.
    const hung = lastAssistant(await say(s.id, 'hang'));
    expect(hung).toMatchObject({ status: 'failed', error: { type: 'adapter_timeout' } });
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

  it('kill -9 of the worker while a request waits: the request becomes timed_out (startup_reconcile), the turn adapter_interrupted', async () => {
    const ws = gitWorkspace();
    const s = (await create('fault', ws)).body.data as Json;
    await begin(s.id, 'write orphan.txt x');
    const p = await pendingOf(s.id);
    const holder = await holderOf(s.id);
    await holder.stop('SIGKILL');
    workers = [...workers.filter((w) => w !== holder), await procs.start('worker', env)];
    const orphaned = await waitFor(
      async () => {
        const a = await c.ok('GET', `${base(s.id)}/approvals/${p.id}`);
        return a.status === 'pending' ? undefined : a;
      },
      { timeoutMs: 20_000, what: 'the orphaned request to be reconciled' },
    );
    expect(orphaned).toMatchObject({ status: 'timed_out', path: 'startup_reconcile' });
    expect(await settled(s.id)).toMatchObject({ status: 'failed', error: { type: 'adapter_interrupted' } });
    expect((await resolve(s.id, p.id as string, { decision: 'approve' })).status).toBe(409);
    expect(existsSync(join(ws, 'orphan.txt'))).toBe(false);
    expect(lastAssistant(await say(s.id, 'still there'))).toMatchObject({ status: 'completed', content: 'echo: still there' });
    expect([200, 204]).toContain((await c.call('DELETE', base(s.id))).status);
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
    // An agent that offers session/resume (and not load): resumed on the next worker, its memory intact, no recap.
    const resumable = (await create('fault_resume')).body.data as Json;
    await say(resumable.id, 'remember gamma');
    const third = await holderOf(resumable.id);
    await third.stop('SIGKILL');
    workers = [...workers.filter((w) => w !== third), await procs.start('worker', env)];
    const resumed = lastAssistant(await say(resumable.id, 'history'));
    expect(resumed).toMatchObject({ status: 'completed', content: 'history: remember gamma', native_session_id: resumable.native_session_id });
    expect((resumed.activities as Json[]).find((a) => a.type === 'native_session_restored')).toMatchObject({
      detail: `session/resume ${resumable.native_session_id as string}`,
    });
    // The kills may have taken the other sessions' adapters too (sessions sharing a worker): their next turns bring
    // them back, restored again, on a live worker.
    expect(lastAssistant(await say(resettable.id, 'history'))).toMatchObject({ status: 'completed' });
    expect(lastAssistant(await say(loadable.id, 'history'))).toMatchObject({ status: 'completed', native_session_id: loadable.native_session_id });
    // The killed workers' adapters died with them: one process per live session, nothing orphaned.
    await waitFor(() => processesMatching(FAULT_AGENT_PROCESS) === 3, { timeoutMs: 10_000, what: 'one adapter process per live session' });
  });
});
