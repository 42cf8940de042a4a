import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { useStack } from '../../support/harness';
import { waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import type { ServerProcess } from '../../support/server-process';
import type { SseEvent } from '../../support/sse';
import { Client, Json, SseClient, TOKEN } from '../tasks/tasks-harness';

/**
 * Issue 27, on real processes (two api processes and a worker, Postgres, Redis): a Hecate Agent turn's approval frames
 * have the API contract's shape and come in order with the turn's other frames — `approval.requested` (written by the worker
 * as its run pauses), `approval.resolved` (written by the api as the decision commits), then the next model call's
 * deltas — for a live client and one resuming later from the buffer; `POST …/messages` waits through the approval (a
 * 202 with the turn when its wait times out first); the public feed pages by the envelope's `sequence`.
 */
describe('agent chat approvals and the events feed (scaled)', () => {
  const suite = useStack({
    mode: 'scaled',
    token: TOKEN,
    workers: 1,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec' }),
  });
  let upstream: FakeUpstream;
  let api: ServerProcess;
  let shortWait: ServerProcess;
  let c: Client;
  let short: Client;

  beforeAll(async () => {
    upstream = suite.upstream;
    api = suite.stack.apis[0];
    // The same deployment, but a POST waits at most 1.5 s for its turn.
    shortWait = await suite.stack.start('api', { ...suite.stack.env, GATEWAY_AGENT_CHAT_WAIT_TIMEOUT: '1500ms' });
    c = new Client(api.url);
    short = new Client(shortWait.url);
  }, 120_000);
  beforeEach(() => upstream.reset());

  const base = (id: string) => `/hecate/v1/agent-chat/sessions/${id}`;
  const agentSession = async () =>
    (
      await c.ok('POST', '/hecate/v1/agent-chat/sessions', {
        runtime_kind: 'agent',
        provider: 'fake',
        model: 'gpt-4o-mini',
        workspace: sandboxOwned(mkdtempSync(join(tmpdir(), 'hecate-approvals-ws-'))),
      })
    ).id as string;
  const gatedTurn = (answer: string) => {
    upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo gated' } }] });
    upstream.script({ content: answer, chunks: 4 });
  };
  /** The index of a turn frame (`<turn>:<stream>:<index>`). */
  const indexOf = (e: SseEvent) => Number(e.id!.split(':')[2]);
  const turnFrames = (events: SseEvent[]) => events.filter((e) => e.id !== undefined);

  it('an agent turn: approval.requested, approval.resolved as the decision commits, then the next deltas; POST waits through it; a resumed client gets both', async () => {
    const id = await agentSession();
    gatedTurn('Done after approval.');
    const sse = new SseClient(`${api.url}${base(id)}/stream`);
    await sse.until((e) => e.event === 'snapshot');
    let answered = false;
    const posting = c.call('POST', `${base(id)}/messages`, { content: 'Run the gated command' }).finally(() => (answered = true));

    const requested = await sse.until((e) => e.event === 'approval.requested');
    const waiting = await waitFor(
      async () => {
        const s = await c.ok('GET', base(id));
        return s.messages[1]?.status === 'awaiting_approval' ? s : undefined;
      },
      { timeoutMs: 20_000, what: 'the turn to wait for its approval' },
    );
    const turn = waiting.active_turn as Json;
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${turn.task_id}/approvals`)) as unknown as Json[];
    expect(approval).toMatchObject({ status: 'pending', kind: 'agent_loop_tool_call', run_id: turn.run_id });
    // The API contract's shape, as External Agent turns send it; the turn's ids kept.
    expect(requested.data).toEqual({
      type: 'approval.requested',
      approval_id: approval.id,
      session_id: id,
      turn_id: turn.id,
      task_id: turn.task_id,
      run_id: turn.run_id,
      adapter_id: null,
      kind: 'agent_loop_tool_call',
      tool_kind: 'shell_exec',
      tool_name: 'shell_exec',
      scope_choices: ['once'],
      created_at: approval.created_at,
      expires_at: null,
    });
    expect(requested.id).toMatch(new RegExp(`^${turn.id}:${turn.run_id}:\\d+$`));
    // The transcript's pending approval names it.
    expect(waiting.messages[1].activities).toContainEqual(
      expect.objectContaining({ type: 'approval', status: 'pending', approval_id: approval.id, needs_action: true }),
    );
    // The POST is still waiting (a waiter re-reads the turn every second: it would have answered at the approval by now).
    await new Promise((r) => setTimeout(r, 2500));
    expect(answered).toBe(false);

    const decided = await c.call('POST', `/hecate/v1/tasks/${turn.task_id}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    const r = await posting;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'agent_chat_session', data: { status: 'completed', active_turn: null } });
    expect(r.body.data.messages[1]).toMatchObject({ status: 'completed', content: 'Done after approval.' });
    expect(r.body.data.messages[1].activities).toContainEqual(expect.objectContaining({ type: 'approval', status: 'approved', approval_id: approval.id }));

    await sse.done;
    const frames = turnFrames(sse.events);
    expect(frames.map(indexOf)).toEqual([...frames.map(indexOf)].sort((x, y) => x - y));
    expect(frames.filter((e) => e.event === 'approval.requested')).toHaveLength(1);
    expect(frames.filter((e) => e.event === 'approval.resolved')).toHaveLength(1);
    const at = (pred: (e: SseEvent) => boolean) => frames.findIndex(pred);
    const iRequested = at((e) => e.event === 'approval.requested');
    const iResolved = at((e) => e.event === 'approval.resolved');
    const textDeltas = frames.filter((e) => e.event === 'delta' && typeof e.data.content === 'string');
    expect(textDeltas.map((e) => e.data.content).join('')).toBe('Done after approval.');
    expect(iRequested).toBeGreaterThan(-1);
    expect(iResolved).toBeGreaterThan(iRequested);
    expect(frames.indexOf(textDeltas[0])).toBeGreaterThan(iResolved);
    expect(frames[iResolved].data).toEqual({
      type: 'approval.resolved',
      approval_id: approval.id,
      session_id: id,
      turn_id: turn.id,
      task_id: turn.task_id,
      run_id: turn.run_id,
      kind: 'agent_loop_tool_call',
      status: 'approved',
      decision: 'approve',
      scope: 'once',
      path: 'operator',
      selected_option: null,
      resolved_at: expect.any(String),
    });
    const tail = sse.events.slice(sse.events.indexOf(textDeltas.at(-1)!) + 1).map((e) => e.event);
    expect(tail).toEqual(['message', 'done']);

    // A client that had everything before the approval resumes later (on the other api) and gets both, in order.
    const before = frames[iRequested - 1];
    const resumed = new SseClient(`${shortWait.url}${base(id)}/stream`, { 'last-event-id': before.id! });
    await resumed.done;
    const again = turnFrames(resumed.events);
    expect(again.map((e) => [e.id, e.event])).toEqual(frames.slice(iRequested).map((e) => [e.id, e.event]));
    expect(again[0].data).toEqual(requested.data);
    expect(again.find((e) => e.event === 'approval.resolved')!.data).toEqual(frames[iResolved].data);
  });

  it('a rejected approval: approval.resolved (denied, by the operator) ends the stream; the POST answers 200 with the cancelled turn', async () => {
    const id = await agentSession();
    gatedTurn('never said');
    const sse = new SseClient(`${api.url}${base(id)}/stream`);
    await sse.until((e) => e.event === 'snapshot');
    const posting = c.call('POST', `${base(id)}/messages`, { content: 'Run the gated command' });
    const requested = await sse.until((e) => e.event === 'approval.requested');
    const { task_id: taskId, approval_id: approvalId } = requested.data as Json;
    expect((await c.call('POST', `/hecate/v1/tasks/${taskId}/approvals/${approvalId}/resolve`, { decision: 'reject', note: 'no' })).status).toBe(200);
    const r = await posting;
    expect(r.status).toBe(200);
    expect(r.body.data.messages[1]).toMatchObject({ status: 'cancelled' });
    await sse.done;
    const events = sse.events.map((e) => e.event);
    const iResolved = events.indexOf('approval.resolved');
    expect(iResolved).toBeGreaterThan(events.indexOf('approval.requested'));
    expect(sse.events[iResolved].data).toMatchObject({ approval_id: approvalId, status: 'denied', decision: 'deny', path: 'operator', session_id: id });
    expect(events.slice(iResolved + 1)).toEqual(['message', 'done']);
    expect(upstream.requests.filter((q) => q.path === '/v1/chat/completions')).toHaveLength(1);
  });

  it('a POST whose wait times out at the approval answers 202 with the turn awaiting_approval; cancelling it resolves the approval on the stream', async () => {
    const id = await agentSession();
    gatedTurn('never said');
    const sse = new SseClient(`${shortWait.url}${base(id)}/stream`);
    await sse.until((e) => e.event === 'snapshot');
    const r = await short.call('POST', `${base(id)}/messages`, { content: 'Run the gated command' });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ object: 'agent_chat_turn', data: { session_id: id, runtime_kind: 'agent', status: 'awaiting_approval' } });
    const requested = await sse.until((e) => e.event === 'approval.requested');
    expect((await c.call('POST', `${base(id)}/cancel`)).status).toBe(202);
    const resolved = await sse.until((e) => e.event === 'approval.resolved');
    expect(resolved.data).toMatchObject({
      approval_id: requested.data.approval_id,
      status: 'cancelled',
      decision: null,
      path: 'request_cancelled',
      session_id: id,
    });
    await sse.done;
    expect(sse.events.slice(sse.events.indexOf(resolved) + 1).map((e) => e.event)).toEqual(['message', 'done']);
    expect((await c.ok('GET', base(id))).messages[1].status).toBe('cancelled');
  });

  it('the public feed pages by the envelope it shows: after_sequence = the last `sequence` gives strictly later events, none twice', async () => {
    // Two runs (shell runs wait for their shell_exec approval here: events can be posted to them all the same).
    const [one, two] = await Promise.all([0, 1].map(() => c.startTask({ execution_kind: 'shell', shell_command: 'true' })));
    const posted: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { taskId, runId } = i % 3 === 0 ? one : two;
      posted.push((await c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { i } })).event_id as string);
    }
    await waitFor(
      async () => {
        const all = (await c.ok('GET', '/hecate/v1/events?event_type=external.event&limit=500')) as unknown as Json[];
        return posted.every((p) => all.some((e) => e.event_id === p && e.sequence > 0)) ? true : undefined;
      },
      { what: 'the posted events in the feed' },
    );
    // A dashboard: 5 at a time, each next page after the last envelope's `sequence`.
    const seen: Json[] = [];
    let after = 0;
    for (let page = 0; page < 50; page++) {
      const r = await c.call('GET', `/hecate/v1/events?event_type=external.event&after_sequence=${after}&limit=5`);
      expect(r.status).toBe(200);
      const data = r.body.data as Json[];
      if (data.length === 0) break;
      for (const e of data) expect(e.sequence).toBeGreaterThan(after);
      expect(r.body.next_after_sequence).toBe(data.at(-1)!.sequence);
      seen.push(...data);
      after = data.at(-1)!.sequence as number;
    }
    const ids = seen.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    const mine = seen.filter((e) => posted.includes(e.event_id as string));
    expect(mine.map((e) => e.event_id)).toEqual(posted);
    // The feed's `sequence` is its position (`cursor`); the run's own sequence is `run_sequence`, as the run's list has it.
    const runEvents = [...(await c.events(one.taskId, one.runId)), ...(await c.events(two.taskId, two.runId))];
    for (const e of mine) {
      expect(e.sequence).toBe(Number(e.cursor));
      expect(e.run_sequence).toBe(runEvents.find((x) => x.event_id === e.event_id)!.sequence);
    }
    expect(mine.some((e) => e.sequence !== e.run_sequence)).toBe(true);

    // The SSE feed: `id:` is that same `sequence`; resuming after one gives only later events.
    const from = mine[5];
    const sse = new SseClient(`${api.url}/hecate/v1/events/stream?event_type=external.event`, { 'last-event-id': String(from.sequence) });
    await waitFor(() => (sse.events.filter((e) => e.event === 'event').length >= 6 ? true : undefined), { what: 'the rest of the feed' });
    sse.close();
    const streamed = sse.events.filter((e) => e.event === 'event');
    expect(streamed.every((e) => e.id === String(e.data.data.sequence) && e.data.data.sequence > from.sequence)).toBe(true);
    expect(streamed.slice(0, 6).map((e) => e.data.data.event_id)).toEqual(mine.slice(6).map((e) => e.event_id));
  });
});
