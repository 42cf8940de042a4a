import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { waitFor } from '../../support/infra';
import { SseReader } from '../../support/sse';
import { providerEnv } from '../../support/provider-env';
import type { AgentChatFrame, Schemas } from '@sdk';
import { sdkClient, settle } from '../../support/sdk';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, SseClient, TOKEN } from '../tasks/tasks-harness';

/**
 * Agent Chat on the built server (embedded: api and worker in one process): sessions, model turns run on the worker,
 * agent turns as visible agent_loop tasks in one transcript, segments and snapshots, the busy rule, cancel, guardrails,
 * the session stream, and the API contract's error table.
 */
describe('agent chat (embedded)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let limited: ServerProcess;
  let c: Client;
  let workspace: string;

  // The suite's calls go through the SDK (libs/sdk); `settle` keeps refusals as {status, body} for the assertions.
  const createSession = (client: Client, body: Json) => settle(client.api.request('post', '/hecate/v1/agent-chat/sessions', { body }));
  const post = (client: Client, id: string, body: Json) =>
    settle(
      client.api.request('post', '/hecate/v1/agent-chat/sessions/{session_id}/messages', {
        path: { session_id: id },
        body: body as Schemas['PostAgentChatMessageDto'],
      }),
    );
  const newModelSession = async (client = c) =>
    (await client.api.post('/hecate/v1/agent-chat/sessions', { body: { runtime_kind: 'model', model: 'gpt-4o-mini' } })).data.id;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini', 'no-tools-model'] });
    workspace = mkdtempSync(join(tmpdir(), 'hecate-agent-chat-ws-'));
    writeFileSync(join(workspace, 'notes.txt'), 'the secret number is 42\n');
    const base = { ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '12', GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec' };
    [server, limited] = await Promise.all([
      procs.start('all', embeddedTasksEnv(base)),
      procs.start(
        'all',
        embeddedTasksEnv({
          ...base,
          GATEWAY_AGENT_CHAT_MAX_TURNS_PER_SESSION: '2',
          GATEWAY_AGENT_CHAT_IDLE_TIMEOUT: '1500ms',
          GATEWAY_AGENT_CHAT_MAX_SESSION_DURATION: '4s',
          GATEWAY_LIVE_STREAM_TTL_SECONDS: '1',
        }),
      ),
    ]);
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('refuses bad sessions and turns with the seed error types', async () => {
    const bad = async (body: Json, status: number, type: string) => {
      const r = await createSession(c, body);
      expect({ status: r.status, type: r.body.error?.type }).toEqual({ status, type });
      return r.body.error;
    };
    await bad({ runtime_kind: 'robot', model: 'gpt-4o-mini' }, 400, 'agent_chat.runtime_kind_invalid');
    await bad({ runtime_kind: 'model' }, 400, 'agent_chat.model_required');
    await bad({ runtime_kind: 'agent', model: 'gpt-4o-mini' }, 400, 'agent_chat.workspace_required');
    await bad({ runtime_kind: 'agent', model: 'gpt-4o-mini', workspace: join(workspace, 'missing') }, 400, 'invalid_request');
    await bad({ runtime_kind: 'external_agent', adapter_id: 'nope', workspace }, 400, 'agent_chat.adapter_not_found');
    // A model the operator marked as not tool-capable cannot run tools.
    await c.ok('PUT', '/hecate/v1/model-capabilities/overrides', { provider: 'fake', model: 'no-tools-model', tool_calling: 'none', streaming: true });
    const caps = await bad({ runtime_kind: 'agent', provider: 'fake', model: 'no-tools-model', workspace }, 422, 'agent_chat.model_capability_required');
    expect(caps.capabilities.tool_calling).toBe('none');

    const id = await newModelSession();
    const turn = async (body: Json, status: number, type: string) => {
      const r = await post(c, id, body);
      expect({ status: r.status, type: r.body.error?.type }).toEqual({ status, type });
    };
    await turn({ content: '   ' }, 400, 'invalid_request');
    await turn({ content: 'hi', runtime_kind: 'external_agent' }, 400, 'agent_chat.runtime_mismatch');
    await turn({ content: 'hi', runtime_kind: 'agent' }, 400, 'agent_chat.workspace_required');
    await turn({ content: 'hi', model: 'no-such-model' }, 422, 'model_not_configured');
    expect((await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/cancel`)).body.error.type).toBe('agent_chat.session_not_running');
    expect((await c.call('GET', '/hecate/v1/agent-chat/sessions/agent_chat_unknown')).status).toBe(404);
    // Nothing of the refused turns was kept.
    const s = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
    expect({ messages: s.messages.length, turns_used: s.turns_used, status: s.status }).toEqual({ messages: 0, turns_used: 0, status: 'idle' });
    expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
  });

  it('POST /hecate/v1/workspace-dialog answers 501 with the error envelope (no folder picker here: clients fall back to manual entry)', async () => {
    const r = await c.call('POST', '/hecate/v1/workspace-dialog', {});
    expect(r.status).toBe(501);
    expect(r.body).toEqual({
      error: {
        type: 'agent_chat.workspace_dialog_unsupported',
        message: expect.stringContaining('no native folder picker'),
        user_message: expect.stringContaining('type the workspace path'),
        operator_action: expect.stringContaining('GATEWAY_WORKSPACE_ROOTS'),
        fallback: 'manual_entry',
        request_id: expect.any(String),
        trace_id: expect.any(String),
      },
    });
    expect(r.headers.get('x-request-id')).toBe(r.body.error.request_id);
    // The route is a /hecate/v1 route like any other: no credential, no answer.
    const anonymous = await new Client(server.url, 'not-a-valid-token').call('POST', '/hecate/v1/workspace-dialog', {});
    expect({ status: anonymous.status, type: anonymous.body.error.type }).toEqual({ status: 401, type: 'unauthorized' });
  });

  it('one transcript: model → agent (tools, a file changed) → agent continued → model, with segments and runtime snapshots', async () => {
    const tasksBefore = ((await c.ok('GET', '/hecate/v1/tasks')) as unknown as Json[]).length;
    const s0 = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini', title: 'Mixed' });
    expect(s0).toMatchObject({ title: 'Mixed', runtime_kind: 'model', status: 'idle', turns_used: 0, messages: [], capabilities: { streaming: true } });
    const id = s0.id as string;

    upstream.script({ content: 'Model says hello.' });
    const r1 = await post(c, id, { content: 'Say hello' });
    expect(r1.status).toBe(200);
    expect(r1.body.object).toBe('agent_chat_session');
    const m1 = r1.body.data.messages;
    expect(m1.map((m: Json) => [m.role, m.status, m.runtime_kind])).toEqual([
      ['user', 'completed', 'model'],
      ['assistant', 'completed', 'model'],
    ]);
    expect(m1[1]).toMatchObject({ content: 'Model says hello.', provider: 'fake', model: 'gpt-4o-mini', segment_id: m1[0].segment_id, turn_id: m1[0].turn_id });
    expect(m1[1].task_id).toBeUndefined();
    expect(m1[1].activities.map((a: Json) => a.type)).toEqual(['started', 'completed']);
    expect(((await c.ok('GET', '/hecate/v1/tasks')) as unknown as Json[]).length).toBe(tasksBefore);

    // Tools on: a visible agent_loop task in the workspace reads a file, writes one, answers.
    upstream.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] });
    upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'answer.txt', content: '42\n' } }] });
    upstream.script({ content: 'The number is 42; I wrote answer.txt.' });
    const r2 = await post(c, id, { content: 'Find the number and write it down', runtime_kind: 'agent', workspace });
    expect(r2.status).toBe(200);
    const m2 = r2.body.data.messages;
    expect(m2).toHaveLength(4);
    expect(m2[3]).toMatchObject({ role: 'assistant', status: 'completed', runtime_kind: 'agent', content: 'The number is 42; I wrote answer.txt.' });
    expect(m2[3].task_id).toMatch(/^task_/);
    expect(m2[3].run_id).toMatch(/^run_/);
    expect(m2[2]).toMatchObject({ task_id: m2[3].task_id, run_id: m2[3].run_id, segment_id: m2[3].segment_id });
    expect(m2[3].segment_id).not.toBe(m1[0].segment_id);
    expect(readFileSync(join(workspace, 'answer.txt'), 'utf8')).toBe('42\n');
    const task = await c.ok('GET', `/hecate/v1/tasks/${m2[3].task_id}`);
    expect(task).toMatchObject({ execution_kind: 'agent_loop', status: 'completed', prompt: 'Find the number and write it down' });
    // The agent's first model call saw the tool result of notes.txt.
    const agentCalls = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(JSON.stringify(agentCalls[2].body?.messages)).toContain('the secret number is 42');

    // A follow-up with tools on continues the same task (a new run resumed from the last one) in the same segment.
    upstream.script({ content: 'Still 42.' });
    const r3 = await post(c, id, { content: 'Are you sure?', runtime_kind: 'agent' });
    const m3 = r3.body.data.messages;
    expect(m3[5]).toMatchObject({ status: 'completed', content: 'Still 42.', task_id: m2[3].task_id, segment_id: m2[3].segment_id });
    expect(m3[5].run_id).not.toBe(m2[3].run_id);
    const run3 = await c.ok('GET', `/hecate/v1/tasks/${m3[5].task_id}/runs/${m3[5].run_id}`);
    expect(run3.resumed_from_run_id).toBe(m2[3].run_id);
    const continued = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!;
    expect(JSON.stringify(continued.body?.messages)).toContain('Find the number and write it down');

    // Tools off again: a model segment whose request carries the whole transcript, the agent's answers included.
    upstream.script({ content: 'Back to plain chat.' });
    const r4 = await post(c, id, { content: 'Summarise', runtime_kind: 'model' });
    const s4 = r4.body.data;
    const last = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!;
    expect(last.body?.messages?.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Say hello'],
      ['assistant', 'Model says hello.'],
      ['user', 'Find the number and write it down'],
      ['assistant', 'The number is 42; I wrote answer.txt.'],
      ['user', 'Are you sure?'],
      ['assistant', 'Still 42.'],
      ['user', 'Summarise'],
    ]);
    expect(s4.segments.map((g: Json) => [g.runtime_kind, g.message_count, g.status])).toEqual([
      ['model', 2, 'completed'],
      ['agent', 4, 'completed'],
      ['model', 2, 'completed'],
    ]);
    expect(s4.segments[1]).toMatchObject({ task_id: m2[3].task_id, latest_run_id: m3[5].run_id });
    expect(s4).toMatchObject({ status: 'completed', turns_used: 4, message_count: 8, task_id: m2[3].task_id, latest_run_id: m3[5].run_id, active_turn: null });
    const list = await c.ok('GET', '/hecate/v1/agent-chat/sessions');
    expect(list.find((x: Json) => x.id === id)).toMatchObject({ turns_used: 4, message_count: 8, status: 'completed' });
    expect(list.find((x: Json) => x.id === id).messages).toBeUndefined();
  });

  it('busy: while an agent turn waits for an approval every turn answers 409; the approval is resolved from the chat and the turn ends', async () => {
    const id = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace })).id;
    upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo gated > gated.txt' } }] });
    upstream.script({ content: 'Done after approval.' });
    // The POST answers when the turn ends (docs/api.md §4): it waits through the approval, decided meanwhile.
    const posting = post(c, id, { content: 'Run the gated command' });
    const session = await waitFor(
      async () => {
        const s = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
        return s.messages[1]?.status === 'awaiting_approval' ? s : undefined;
      },
      { timeoutMs: 30_000, what: 'the agent turn to wait for its approval' },
    );
    const waiting = session.messages[1];
    expect(session).toMatchObject({ status: 'awaiting_approval', active_turn: { status: 'awaiting_approval', task_id: waiting.task_id } });

    for (const body of [{ content: 'model turn', runtime_kind: 'model' }, { content: 'agent turn' }]) {
      const busy = await post(c, id, body);
      expect(busy.status).toBe(409);
      expect(busy.body.error).toMatchObject({
        type: 'agent_chat.agent_session_busy',
        task_id: waiting.task_id,
        latest_run_id: waiting.run_id,
        run_status: 'awaiting_approval',
      });
    }
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${waiting.task_id}/approvals`)) as unknown as Json[];
    expect(waiting.activities).toContainEqual(expect.objectContaining({ type: 'approval', status: 'pending', approval_id: approval.id, needs_action: true }));
    await c.ok('POST', `/hecate/v1/tasks/${waiting.task_id}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    const r = await posting;
    expect(r.status).toBe(200);
    const done = r.body.data;
    expect(done.messages[1].content).toBe('Done after approval.');
    expect(done.messages[1].activities.find((a: Json) => a.type === 'approval')).toMatchObject({ status: 'approved', kind: 'agent_loop_tool_call' });
    // Where the turn's time went: two model calls, one tool, the wait for the approval; the buckets add up.
    const t = done.messages[1].timing;
    expect(t).toMatchObject({ turn_count: 2, tool_count: 1 });
    expect(t.approval_wait_ms).toBeGreaterThan(0);
    expect(t.queue_ms + t.model_ms + t.tool_ms + t.approval_wait_ms + t.overhead_ms).toBe(t.total_ms);
    expect(t[`${t.bottleneck}_ms`]).toBe(t.bottleneck_ms);
    expect(readFileSync(join(workspace, 'gated.txt'), 'utf8')).toBe('gated\n');
    expect(done.status).toBe('completed');
  });

  it('cancel stops a running model turn from the api, keeps its partial reply, and frees the session', async () => {
    const id = await newModelSession();
    upstream.script({ content: 'a b c d e f g h i j k l m n o p q r s t', chunks: 20, chunkIntervalMs: 300 });
    const started = await post(c, id, { content: 'Count slowly', wait: false });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ object: 'agent_chat_turn', data: { session_id: id, runtime_kind: 'model' } });
    const turnId = started.body.data.id;
    await waitFor(async () => ((await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages[1].content.length > 0 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'a partial reply',
    });
    const busy = await post(c, id, { content: 'again' });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ type: 'agent_chat.agent_session_busy', turn_id: turnId });
    const cancel = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/interrupt`);
    expect(cancel.status).toBe(202);
    expect(cancel.body.data).toMatchObject({ session_id: id, turn_id: turnId });
    const s = await waitFor(
      async () => {
        const x = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
        return x.messages[1].status === 'cancelled' ? x : undefined;
      },
      { timeoutMs: 15_000, what: 'the turn to be cancelled' },
    );
    expect(s.messages[1].content.length).toBeGreaterThan(0);
    expect('a b c d e f g h i j k l m n o p q r s t'.startsWith(s.messages[1].content)).toBe(true);
    expect(s.messages[1].content).not.toBe('a b c d e f g h i j k l m n o p q r s t');
    await waitFor(async () => (upstream.requests.at(-1)?.aborted ? true : undefined), { timeoutMs: 10_000, what: 'the upstream request to be aborted' });
    expect((await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/cancel`)).body.error.type).toBe('agent_chat.session_not_running');
    upstream.script({ content: 'free again' });
    expect((await post(c, id, { content: 'next' })).body.data.messages[3].content).toBe('free again');
  });

  it('stream: true answers with the turn as SSE; the session stream resumes from an index and ends with the settled message', async () => {
    const id = await newModelSession();
    const text = Array.from({ length: 24 }, (_, i) => `w${i} `).join('');
    upstream.script({ content: text, chunks: 24, chunkIntervalMs: 40 });
    const sse = new SseReader(`${server.url}/hecate/v1/agent-chat/sessions/${id}/messages`, { body: { content: 'Stream it', stream: true }, token: TOKEN });
    await sse.done;
    expect(sse.status).toBe(200);
    const events = sse.events;
    expect(events[0].event).toBe('snapshot');
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.map((e) => e.data.content).join('')).toBe(text);
    expect(deltas.map((e) => Number(e.id!.split(':')[2]))).toEqual(deltas.map((_, i) => i + 1));
    const message = events.find((e) => e.event === 'message')!.data;
    expect(message).toMatchObject({ role: 'assistant', status: 'completed', content: text });
    expect(events.at(-1)!.event).toBe('done');
    expect(events.at(-1)!.data.data.messages[1].content).toBe(text);

    // Replay of the finished turn after index 10 (Last-Event-ID), and with ?last_index=.
    const cursor = deltas[9].id!;
    const again = new SseClient(`${server.url}/hecate/v1/agent-chat/sessions/${id}/stream`, { 'last-event-id': cursor });
    await again.done;
    const rest = again.events.filter((e) => e.event === 'delta');
    expect(rest.map((e) => e.id)).toEqual(deltas.slice(10).map((e) => e.id));
    expect(again.events.find((e) => e.event === 'message')!.data.content).toBe(text);
    const byIndex = new SseClient(`${server.url}/hecate/v1/agent-chat/sessions/${id}/stream?last_index=20`);
    await byIndex.done;
    expect(byIndex.events.filter((e) => e.event === 'delta').map((e) => e.id)).toEqual(deltas.slice(20).map((e) => e.id));
  });

  it("the SDK's session stream resumes a turn across dropped connections: every delta once, in order, one message, one done", async () => {
    const id = await newModelSession();
    const text = Array.from({ length: 30 }, (_, i) => `v${i} `).join('');
    upstream.script({ content: text, chunks: 30, chunkIntervalMs: 60 });
    // The first two stream connections die mid-turn (after 5, then 6 more deltas), as a reset connection would.
    const cutAfter = [5, 6];
    let connection = 0;
    const lastEventIds: Array<string | null> = [];
    const droppingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(init?.headers);
      if (headers.get('accept') !== 'text/event-stream') return res;
      lastEventIds.push(headers.get('last-event-id'));
      const limit = cutAfter[connection++];
      if (limit === undefined) return res;
      const reader = res.body!.getReader();
      let deltas = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          deltas += (new TextDecoder().decode(value).match(/event: delta/g) ?? []).length;
          if (deltas >= limit) {
            controller.error(new TypeError('terminated: connection reset'));
            await reader.cancel();
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const hecate = sdkClient(server.url, TOKEN, { fetch: droppingFetch, reconnect: { initialDelayMs: 20, maxDelayMs: 100 } });
    const frames: AgentChatFrame[] = [];
    const reading = (async () => {
      for await (const frame of hecate.streams.agentChat(id)) frames.push(frame);
    })();
    await waitFor(() => (frames.some((f) => f.event === 'snapshot') ? true : undefined), { what: 'the first snapshot' });
    expect((await post(c, id, { content: 'Stream it again', wait: false })).status).toBe(202);
    await reading;

    expect(connection).toBeGreaterThanOrEqual(3);
    expect(lastEventIds[0]).toBeNull();
    expect(lastEventIds.slice(1).every((v) => v !== null && /^turn_[^:]+:[^:]+:\d+$/.test(v))).toBe(true);
    const deltas = frames.filter((f) => f.event === 'delta');
    expect(deltas.map((f) => f.data.content).join('')).toBe(text);
    expect(deltas.map((f) => Number(f.id.split(':')[2]))).toEqual(deltas.map((_, i) => i + 1));
    expect(frames.filter((f) => f.event === 'message')).toHaveLength(1);
    expect(frames.at(-1)!.event).toBe('done');
    expect(frames.filter((f) => f.event === 'done')).toHaveLength(1);
  });

  it('an idle session stream waits for the next turn and closes after it ends', async () => {
    const id = await newModelSession();
    const sse = new SseClient(`${server.url}/hecate/v1/agent-chat/sessions/${id}/stream`);
    await sse.until((e) => e.event === 'snapshot');
    upstream.script({ content: 'late reply', chunks: 2 });
    const r = await post(c, id, { content: 'wake up' });
    expect(r.status).toBe(200);
    await sse.done;
    expect(sse.events.map((e) => e.event).filter((e) => e !== 'delta')).toEqual(['snapshot', 'snapshot', 'message', 'done']);
    expect(
      sse.events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.content)
        .join(''),
    ).toBe('late reply');
  });

  it('guidance: 20 items posted while a multi-turn agent runs, some edited or deleted during consumption — each consumed once, in order, with matching receipts', async () => {
    const id = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace })).id;
    const CALLS = 10;
    for (let i = 0; i < CALLS - 1; i++) upstream.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }], latencyMs: 120 });
    upstream.script({ content: 'All guidance considered.', latencyMs: 120 });
    const sse = new SseClient(`${server.url}/hecate/v1/agent-chat/sessions/${id}/stream`);
    await sse.until((e) => e.event === 'snapshot');
    const started = await post(c, id, { content: 'Work through the notes', wait: false });
    expect(started.status).toBe(202);
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 10_000);

    const deleted = new Set<string>();
    const edited = new Map<string, string>();
    const refused: Array<{ op: string; type: string }> = [];
    const changes: Promise<void>[] = [];
    for (let i = 1; i <= 20; i++) {
      const gid = `g${String(i).padStart(2, '0')}`;
      const added = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/guidance`, { content: `guidance ${gid}`, guidance_id: gid, metadata: { n: i } });
      expect(added.status).toBe(200);
      expect(added.body).toEqual({ object: 'agent_chat_guidance', data: { session_id: id, guidance_id: gid, accepted: true } });
      // Edits and deletes land a little later, racing the model calls that take the items.
      const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
      if (i % 4 === 0) {
        changes.push(
          later((i * 53) % 150).then(() =>
            c.call('PATCH', `/hecate/v1/agent-chat/sessions/${id}/guidance/${gid}`, { content: `edited ${gid}` }).then((r) => {
              if (r.status === 200) edited.set(gid, `edited ${gid}`);
              else refused.push({ op: 'patch', type: r.body.error.type });
            }),
          ),
        );
      }
      if (i % 7 === 0) {
        changes.push(
          later((i * 71) % 150).then(() =>
            c.call('DELETE', `/hecate/v1/agent-chat/sessions/${id}/guidance/${gid}`).then((r) => {
              if (r.status === 200) deleted.add(gid);
              else refused.push({ op: 'delete', type: r.body.error.type });
            }),
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 40));
    }
    await Promise.all(changes);
    expect(refused.every((r) => r.type === 'agent_chat.guidance_consumed')).toBe(true);
    expect(edited.size + refused.filter((r) => r.op === 'patch').length).toBe(5);
    let s: Json;
    s = await waitFor(
      async () => {
        const x = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
        return x.active_turn === null ? x : undefined;
      },
      { timeoutMs: 30_000, what: 'the agent turn to end' },
    );
    // Items posted after the last model call wait for the next turn's first model call.
    const pendingAfter = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}/guidance`)).items;
    if (pendingAfter.length > 0) {
      upstream.script({ content: 'Read the rest.' });
      await post(c, id, { content: 'anything else?', runtime_kind: 'model' });
      s = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
    }
    await sse.done;

    const all = Array.from({ length: 20 }, (_, i) => `g${String(i + 1).padStart(2, '0')}`);
    const expected = all.filter((g) => !deleted.has(g));
    const guided = s.messages.filter((m: Json) => m.metadata?.guidance_id);
    expect(guided.map((m: Json) => m.metadata.guidance_id)).toEqual(expected);
    for (const m of guided) {
      expect(m).toMatchObject({ role: 'user', status: 'completed', content: edited.get(m.metadata.guidance_id) ?? `guidance ${m.metadata.guidance_id}` });
      expect(m.metadata.n).toBe(Number(m.metadata.guidance_id.slice(1)));
    }
    // Receipts: the message each became and the model call that first saw it.
    const receipts = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}/guidance?status=all`)).items;
    expect(receipts.map((r: Json) => r.guidance_id)).toEqual(expected);
    const calls = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    const agentRun = s.messages[1].run_id;
    for (const r of receipts) {
      const msg = guided.find((m: Json) => m.id === r.receipt.message_id);
      expect(msg).toBeDefined();
      expect(r.status).toBe('consumed');
      if (r.receipt.run_id === agentRun) {
        const k = r.receipt.model_call_index;
        expect(JSON.stringify(calls[k - 1].body?.messages)).toContain(msg.content);
        if (k > 1) expect(JSON.stringify(calls[k - 2].body?.messages)).not.toContain(msg.content);
      }
      const late = await c.call('PATCH', `/hecate/v1/agent-chat/sessions/${id}/guidance/${r.guidance_id}`, { content: 'too late' });
      expect(late.status).toBe(409);
      expect(late.body.error).toMatchObject({ type: 'agent_chat.guidance_consumed', message_id: r.receipt.message_id });
    }
    // The stream of the agent turn carried each consumed item as a user message and a receipt.
    const streamed = sse.events.filter((e) => e.event === 'guidance.consumed').map((e) => e.data.guidance_id);
    const inAgentRun = receipts.filter((r: Json) => r.receipt.run_id === agentRun).map((r: Json) => r.guidance_id);
    expect(streamed).toEqual(inAgentRun);
    expect(sse.events.filter((e) => e.event === 'message' && e.data.role === 'user').map((e) => e.data.metadata.guidance_id)).toEqual(inAgentRun);
    // The final answer comes after the guidance it answered.
    const agentAnswer = s.messages.findIndex((m: Json) => m.content === 'All guidance considered.');
    expect(agentAnswer).toBeGreaterThan(s.messages.findIndex((m: Json) => m.metadata?.guidance_id === inAgentRun.at(-1)));
    expect((await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/guidance`, { content: '' })).body.error.type).toBe('invalid_request');
    expect((await c.call('PATCH', `/hecate/v1/agent-chat/sessions/${id}/guidance/nope`, { content: 'x' })).status).toBe(404);
  });

  it('rerun and edit-last-user-message: earlier answers stay as superseded and leave the history; edit updates the stored message in place; rerun with guidance_content runs it as a new prompt', async () => {
    const id = await newModelSession();
    upstream.script({ content: 'first answer' });
    await post(c, id, { content: 'What is 2+2?' });
    upstream.script({ content: 'second answer' });
    const rerun = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/rerun`, {});
    expect(rerun.status).toBe(200);
    let s = rerun.body.data;
    expect(s.messages.map((m: Json) => [m.role, m.status, m.content])).toEqual([
      ['user', 'completed', 'What is 2+2?'],
      ['assistant', 'superseded', 'first answer'],
      ['assistant', 'completed', 'second answer'],
    ]);
    expect(s.messages[2].turn_id).not.toBe(s.messages[1].turn_id);
    const rerunCall = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!;
    expect(rerunCall.body?.messages?.map((m) => m.content)).toEqual(['What is 2+2?']);

    // Busy: edit is refused while a turn runs; rerun stops the running turn first.
    upstream.script({ content: 'x y z w v u t s r q', chunks: 10, chunkIntervalMs: 300 });
    const slow = await post(c, id, { content: 'count', wait: false });
    expect((await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/edit-last-user-message`, { content: 'nope' })).body.error.type).toBe(
      'agent_chat.agent_session_busy',
    );
    await waitFor(async () => ((await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages.at(-1).content ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the slow turn to stream',
    });
    upstream.script({ content: 'applied now' });
    const withGuidance = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/rerun`, { guidance_content: 'Use Roman numerals' });
    expect(withGuidance.status).toBe(200);
    s = withGuidance.body.data;
    const cancelled = s.messages.find((m: Json) => m.turn_id === slow.body.data.id && m.role === 'assistant');
    expect(cancelled.status).toBe('cancelled');
    expect(s.messages.at(-2)).toMatchObject({ role: 'user', content: 'Use Roman numerals' });
    expect(s.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'completed', content: 'applied now' });

    // Edit the last user message (docs/api.md §5: "updates the stored last user message"): the same message, new content, no
    // message added; its answer leaves the history. Rerun answers the edited text under the same user message id.
    const before = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages as Json[];
    const target = before.at(-2)!;
    const edited = await c.ok('POST', `/hecate/v1/agent-chat/sessions/${id}/edit-last-user-message`, { content: 'Use Arabic numerals' });
    expect(edited.messages).toHaveLength(before.length);
    expect(edited.messages.map((m: Json) => m.id)).toEqual(before.map((m) => m.id));
    expect(edited.messages.at(-2)).toMatchObject({
      id: target.id,
      role: 'user',
      status: 'completed',
      content: 'Use Arabic numerals',
      metadata: { edited_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    expect(edited.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'superseded', content: 'applied now' });
    expect(edited.messages.slice(0, -2)).toEqual(before.slice(0, -2));
    // A session read later shows the same stored message.
    expect((await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages.at(-2)).toMatchObject({ id: target.id, content: 'Use Arabic numerals' });

    upstream.script({ content: 'four' });
    s = (await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/rerun`, {})).body.data;
    expect(s.messages).toHaveLength(before.length + 1);
    expect(s.messages.slice(-3).map((m: Json) => [m.id === target.id, m.role, m.status, m.content])).toEqual([
      [true, 'user', 'completed', 'Use Arabic numerals'],
      [false, 'assistant', 'superseded', 'applied now'],
      [false, 'assistant', 'completed', 'four'],
    ]);
    const last = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!;
    expect(last.body?.messages?.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is 2+2?'],
      ['assistant', 'second answer'],
      ['user', 'count'],
      ['assistant', cancelled.content],
      ['user', 'Use Arabic numerals'],
    ]);
    // Edit again after the rerun: still the same message, and nothing without a user message to edit is touched.
    const again = await c.ok('POST', `/hecate/v1/agent-chat/sessions/${id}/edit-last-user-message`, { content: 'Use words' });
    expect(again.messages).toHaveLength(s.messages.length);
    expect(again.messages.at(-3)).toMatchObject({ id: target.id, content: 'Use words' });
    expect(again.messages.at(-1)).toMatchObject({ content: 'four', status: 'superseded' });
    const empty = await newModelSession();
    const refused = await c.call('POST', `/hecate/v1/agent-chat/sessions/${empty}/edit-last-user-message`, { content: 'x' });
    expect({ status: refused.status, type: refused.body.error.type }).toEqual({ status: 400, type: 'invalid_request' });
  });

  it('on_busy: interrupt stops the running turn and runs the new one; active-sessions reports busy and idle', async () => {
    const feed = new SseClient(`${server.url}/hecate/v1/agent-chat/active-sessions`);
    await feed.until((e) => e.event === 'snapshot');
    const id = await newModelSession();
    upstream.script({ content: 'a b c d e f g h i j', chunks: 10, chunkIntervalMs: 300 });
    const first = await post(c, id, { content: 'slow one', wait: false });
    await waitFor(async () => ((await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages[1].content ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the first turn to stream',
    });
    upstream.script({ content: 'interrupting reply' });
    const second = await post(c, id, { content: 'never mind', on_busy: 'interrupt' });
    expect(second.status).toBe(200);
    const msgs = second.body.data.messages;
    expect(msgs.map((m: Json) => [m.role, m.status])).toEqual([
      ['user', 'completed'],
      ['assistant', 'cancelled'],
      ['user', 'completed'],
      ['assistant', 'completed'],
    ]);
    expect(msgs[3].content).toBe('interrupting reply');
    const mine = () => feed.events.filter((e) => e.data?.session_id === id).map((e) => [e.event, e.data.turn_id, e.data.status]);
    await waitFor(() => (mine().filter((x) => x[0] === 'session.idle').length >= 2 ? true : undefined), { timeoutMs: 10_000, what: 'two idle events' });
    const seen = mine();
    const firstTurn = first.body.data.id;
    expect(seen).toContainEqual(['session.busy', firstTurn, 'queued']);
    expect(seen).toContainEqual(['session.idle', firstTurn, 'cancelled']);
    expect(seen).toContainEqual(['session.idle', msgs[3].turn_id, 'completed']);
    expect(seen.findIndex((x) => x[1] === firstTurn && x[0] === 'session.idle')).toBeLessThan(seen.findIndex((x) => x[1] === msgs[3].turn_id));
    feed.close();
  });

  it('on_busy: enqueue keeps a durable server-side queue: edited and removed while waiting, it survives a restart and drains in order', async () => {
    const env = embeddedTasksEnv({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_QUEUE_LEASE_SECONDS: '2' });
    let own = await procs.start('all', env);
    let oc = new Client(own.url);
    const id = await newModelSession(oc);
    upstream.script({ content: 'slow slow slow slow slow slow slow slow', chunks: 8, chunkIntervalMs: 400 });
    const running = await post(oc, id, { content: 'first', wait: false });
    expect(running.status).toBe(202);
    const items: Json[] = [];
    for (const [content, extra] of [
      ['second', {}],
      ['third', { model: 'gpt-4o-mini' }],
      ['fourth', {}],
      ['fifth', {}],
    ] as const) {
      const r = await post(oc, id, { content, on_busy: 'enqueue', ...extra });
      expect(r.status).toBe(202);
      expect(r.body).toMatchObject({ object: 'agent_chat_queue_item', data: { content, status: 'queued', runtime_kind: 'model', model: 'gpt-4o-mini' } });
      items.push(r.body.data);
    }
    expect((await oc.ok('GET', `/hecate/v1/agent-chat/sessions/${id}/queue`)).map((q: Json) => q.content)).toEqual(['second', 'third', 'fourth', 'fifth']);
    expect((await oc.ok('PATCH', `/hecate/v1/agent-chat/sessions/${id}/queue/${items[1].id}`, { content: 'third (edited)' })).content).toBe('third (edited)');
    expect((await oc.ok('DELETE', `/hecate/v1/agent-chat/sessions/${id}/queue/${items[2].id}`)).deleted).toBe(true);

    // kill -9 mid turn; the queue is in Postgres (here PGlite), the turn is taken over at boot.
    await own.stop('SIGKILL');
    upstream.script({ content: ' and done', chunks: 2 });
    own = await procs.start('all', env);
    oc = new Client(own.url);
    const s = await waitFor(
      async () => {
        const x = await oc.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
        return x.messages.length === 8 && x.active_turn === null ? x : undefined;
      },
      { timeoutMs: 40_000, what: 'the queue to drain after the restart' },
    );
    expect(s.messages.map((m: Json) => [m.role, m.status])).toEqual(
      Array(4)
        .fill([
          ['user', 'completed'],
          ['assistant', 'completed'],
        ])
        .flat(),
    );
    expect(s.messages.filter((m: Json) => m.role === 'user').map((m: Json) => m.content)).toEqual(['first', 'second', 'third (edited)', 'fifth']);
    // Each queued prompt was answered after the one before it (the default reply echoes the prompt).
    expect(
      s.messages
        .filter((m: Json) => m.role === 'assistant')
        .slice(1)
        .map((m: Json) => m.content),
    ).toEqual(['echo: second', 'echo: third (edited)', 'echo: fifth']);
    expect(await oc.ok('GET', `/hecate/v1/agent-chat/sessions/${id}/queue`)).toEqual([]);
    const gone = await oc.call('PATCH', `/hecate/v1/agent-chat/sessions/${id}/queue/${items[0].id}`, { content: 'late' });
    expect(gone.status).toBe(409);
    await own.stop('SIGTERM');
  });

  it("git workspace: each agent turn captures its diff; files, per-file diff and revert of only that turn's paths", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'hecate-agent-chat-git-'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
    git('init', '-q');
    writeFileSync(join(repo, 'README.md'), 'line one\nline two\n');
    git('add', '-A');
    git('commit', '-qm', 'init');
    writeFileSync(join(repo, 'scratch.txt'), "not the agent's\n"); // changed before the turn: never the turn's
    const id = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace: repo })).id;
    upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'README.md', content: 'line one\nline 2\nline three\n' } }] });
    upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'src/new.txt', content: 'hello\n' } }] });
    upstream.script({ content: 'Edited two files.' });
    const s = (await post(c, id, { content: 'Edit the readme and add a file' })).body.data;
    const msg = s.messages[1];
    expect(msg).toMatchObject({ status: 'completed', content: 'Edited two files.' });
    expect(msg.diff_stat).toContain('2 files changed, 3 insertions(+), 1 deletion(-)');
    // The run's story in Task Detail's vocabulary: model turns, tool calls, changed files, final answer, terminal state.
    const types = msg.activities.map((a: Json) => a.type);
    expect(types[0]).toBe('started');
    expect(types.filter((t: string) => t === 'thinking')).toHaveLength(3);
    expect(msg.activities.filter((a: Json) => a.type === 'tool_call').map((a: Json) => a.tool_name)).toEqual(['file_write', 'file_write']);
    expect(types).toEqual(expect.arrayContaining(['changed_files', 'final_answer', 'run_result']));
    expect(msg.activities.find((a: Json) => a.type === 'run_result').status).toBe('completed');
    const base = `/hecate/v1/agent-chat/sessions/${id}/messages/${msg.id}`;
    const files = await c.call('GET', `${base}/files`);
    expect(files.body).toEqual({
      object: 'agent_chat_changed_files',
      data: [
        { path: 'README.md', additions: 2, deletions: 1, status: 'modified' },
        { path: 'src/new.txt', additions: 1, deletions: 0, status: 'added' },
      ],
    });
    const one = await c.ok('GET', `${base}/files/${encodeURIComponent('src/new.txt')}`);
    expect(one).toMatchObject({ path: 'src/new.txt', status: 'added', additions: 1 });
    expect(one.diff).toMatch(/^diff --git a\/src\/new.txt b\/src\/new.txt\n[\s\S]*\+hello\n$/);
    expect((await c.call('GET', `${base}/files/${encodeURIComponent('scratch.txt')}`)).status).toBe(404);
    expect((await c.call('GET', `/hecate/v1/agent-chat/sessions/${id}/messages/msg_nope/files`)).status).toBe(404);

    const refused = await c.call('POST', `${base}/revert`, { paths: ['scratch.txt'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request', paths: ['scratch.txt'] });

    const reverted = await c.call('POST', `${base}/revert`, { paths: ['README.md'] });
    expect(reverted.status).toBe(200);
    expect(reverted.body).toEqual({
      object: 'agent_chat_revert',
      data: {
        reverted: true,
        paths: ['README.md'],
        diff_stat: expect.stringContaining('src/new.txt | 1 +'),
        files: [{ path: 'src/new.txt', additions: 1, deletions: 0, status: 'added' }],
      },
    });
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('line one\nline two\n');
    expect(readFileSync(join(repo, 'src/new.txt'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(repo, 'scratch.txt'), 'utf8')).toBe("not the agent's\n");
    const after = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`)).messages[1];
    expect(after.activities.at(-1)).toMatchObject({ type: 'files_reverted', detail: 'README.md' });
    expect((await c.ok('GET', `${base}/files`)).map((f: Json) => f.path)).toEqual(['src/new.txt']);

    // An empty list reverts the rest; then nothing is left.
    expect((await c.ok('POST', `${base}/revert`, { paths: [] })).files).toEqual([]);
    expect(existsSync(join(repo, 'src/new.txt'))).toBe(false);
    expect((await c.call('POST', `${base}/revert`, { paths: [] })).status).toBe(409);
    expect(git('status', '--porcelain').toString()).toBe('?? scratch.txt\n');

    // A workspace that is not a Git work tree has no diff to revert.
    const plain = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'agent', provider: 'fake', model: 'gpt-4o-mini', workspace })).id;
    upstream.script({ content: 'nothing to change' });
    const pm = (await post(c, plain, { content: 'hi' })).body.data.messages[1];
    expect(await c.ok('GET', `/hecate/v1/agent-chat/sessions/${plain}/messages/${pm.id}/files`)).toEqual([]);
    const nonGit = await c.call('POST', `/hecate/v1/agent-chat/sessions/${plain}/messages/${pm.id}/revert`, { paths: [] });
    expect(nonGit.status).toBe(400);
    expect(nonGit.body.error.type).toBe('invalid_request');
  });

  it('guardrails answer 422 with the seed types; a cursor into an expired live stream gets the message with resume_fallback; close keeps history; delete removes it', async () => {
    const lc = new Client(limited.url);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const [turns, idle, wall] = [await newModelSession(lc), await newModelSession(lc), await newModelSession(lc)];
    for (const id of [turns, wall, idle]) expect((await post(lc, id, { content: 'first' })).status).toBe(200);
    // Taken after the first turns answered (the idle session's last, so its wall clock is the shortest when it is checked):
    // every session's server-side start and activity are earlier, so waits from here are enough.
    const lastActivity = Date.now();
    expect((await post(lc, turns, { content: 'second' })).status).toBe(200);
    const over = await post(lc, turns, { content: 'third' });
    expect(over.status).toBe(422);
    expect(over.body.error).toMatchObject({ type: 'agent_chat.session_limit_exceeded', turns_used: 2, max_turns_per_session: 2 });
    expect(await lc.ok('GET', `/hecate/v1/agent-chat/sessions/${turns}`)).toMatchObject({
      max_turns_per_session: 2,
      idle_timeout_ms: 1500,
      max_session_duration_ms: 4000,
      turns_used: 2,
    });

    // The idle and wall-clock guardrails are elapsed time itself (1.5 s idle, 4 s since the first turn): wait them out,
    // before anything else that waits (past 4 s the idle session would answer the wall-clock limit first).
    await sleep(Math.max(0, lastActivity + 1700 - Date.now()));
    const idleOut = await post(lc, idle, { content: 'after a pause' });
    expect(idleOut.status).toBe(422);
    expect(idleOut.body.error).toMatchObject({ type: 'agent_chat.session_idle_timeout', limit_ms: 1500 });
    await sleep(Math.max(0, lastActivity + 4200 - Date.now()));
    const wallOut = await post(lc, wall, { content: 'too late' });
    expect(wallOut.status).toBe(422);
    expect(wallOut.body.error).toMatchObject({ type: 'agent_chat.session_duration_limit_exceeded', limit_ms: 4000 });

    // A stream cursor whose live buffer expired (1 s TTL here): the settled message from Postgres, flagged.
    const text = 'one two three four';
    upstream.script({ content: text, chunks: 4 });
    const expiring = await newModelSession(lc);
    const streamed = new SseReader(`${limited.url}/hecate/v1/agent-chat/sessions/${expiring}/messages`, {
      body: { content: 'stream', stream: true },
      token: TOKEN,
    });
    await streamed.done;
    const firstDelta = streamed.events.find((e) => e.event === 'delta')!;
    // Before the buffer expires the same cursor replays the later deltas; once it has, the message comes flagged.
    const late = await waitFor(
      async () => {
        const r = new SseClient(`${limited.url}/hecate/v1/agent-chat/sessions/${expiring}/stream`, { 'last-event-id': firstDelta.id! });
        await r.done;
        return r.events.some((e) => e.event === 'delta') ? undefined : r;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: 'the live buffer to expire (1 s TTL)' },
    );
    expect(late.events.map((e) => e.event)).toEqual(['snapshot', 'message', 'done']);
    expect(late.events[1].data).toMatchObject({ role: 'assistant', content: text, resume_fallback: true });

    const closed = await lc.ok('POST', `/hecate/v1/agent-chat/sessions/${turns}/close`);
    expect(closed).toMatchObject({ status: 'closed', message_count: 4 });
    expect((await lc.call('DELETE', `/hecate/v1/agent-chat/sessions/${turns}`)).body.data).toEqual({ id: turns, deleted: true });
    expect((await lc.call('GET', `/hecate/v1/agent-chat/sessions/${turns}`)).status).toBe(404);
  });
});
