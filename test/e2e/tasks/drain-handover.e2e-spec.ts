import type { FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { useStack, type Stack } from '../../support/harness';
import { providerEnv } from '../../support/provider-env';
import { Client, expectGapFree, Json, slowReply, SseClient, TOKEN } from './tasks-harness';

const LEASE_S = 20;

/**
 * Issue 18, graceful drain: a worker stopped with SIGTERM whose run outlives the shutdown grace hands the run over —
 * its lease released, the run queued again under a fresh job — so another worker resumes it at once, not after the
 * lease (20 s here) expires. The model call cut off by the drain is made again (it has no side effect).
 */
describe('graceful drain hands runs over (scaled, 20 s lease, 1 s shutdown grace)', () => {
  const suite = useStack({
    mode: 'scaled',
    token: TOKEN,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_S),
      GATEWAY_SHUTDOWN_GRACE_MS: '1000',
    }),
  });
  let stack: Stack;
  let upstream: FakeUpstream;
  let c: Client;

  beforeAll(() => {
    ({ stack, upstream } = suite);
    c = new Client(stack.url);
  });
  beforeEach(() => upstream.reset());

  it('SIGTERM mid model stream: the run is handed over and finished by the other worker well inside the lease', async () => {
    upstream.script({ content: slowReply('draining', 400), chunks: 400, chunkIntervalMs: 100 });
    upstream.script({ content: 'Finished after the hand-over.' });
    const draining = await stack.start('worker');
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'answer slowly' });
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 20_000);
    const survivor = await stack.start('worker');
    const stoppedAt = Date.now();
    expect(await draining.stop('SIGTERM')).toBe(0);
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 30_000);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    expect(events.filter((e) => ['run.finished', 'run.failed', 'run.cancelled'].includes(e.type as string))).toHaveLength(1);
    const handover = events.find((e) => e.type === 'gap.run_disconnected') as Json;
    expect(handover.data).toMatchObject({ reason: 'worker_shutdown', action: 'handed_over', recovered_status: 'queued' });
    const starts = events.filter((e) => e.type === 'run.started');
    expect(starts).toHaveLength(2);
    expect(starts[1].data.worker).toContain(`:${survivor.proc.pid}:`);
    // Resumed at once, not after the lease: well under the 20 s it would take to expire.
    expect(new Date(starts[1].occurred_at as string).getTime() - stoppedAt).toBeLessThan(LEASE_S * 1000 * 0.5);
    expect(events.find((e) => e.type === 'assistant.final_answer')!.data.text).toBe('Finished after the hand-over.');
    expect(draining.output()).toContain('draining worker handed its run over');
    await survivor.stop('SIGTERM');
  });

  it('SIGTERM mid Agent Chat model turn: the turn is handed over at once and the other worker makes the call again (a reset frame, the new answer alone)', async () => {
    upstream.script({ content: slowReply('slow', 400), chunks: 400, chunkIntervalMs: 100 });
    upstream.script({ content: 'and the rest.', chunks: 3 });
    const draining = await stack.start('worker');
    const id = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' })).id as string;
    const waiting = c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content: 'long answer' });
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 20_000);
    // The draining worker has streamed part of the reply; an OpenAI-protocol model answers anew rather than continue it
    // (docs/takeover.md), so the survivor makes the call from the start.
    const live = new SseClient(`${c.url}/hecate/v1/agent-chat/sessions/${id}/stream`);
    const firstDelta = await live.until((e) => e.event === 'delta');
    live.close();
    const survivor = await stack.start('worker');
    const stoppedAt = Date.now();
    expect(await draining.stop('SIGTERM')).toBe(0);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    const reply = (answer.body as Json).data.messages[1];
    expect(reply).toMatchObject({ status: 'completed' });
    expect(reply.content).toBe('and the rest.');
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE_S * 1000 * 0.5);
    const calls = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(calls).toHaveLength(2);
    expect((calls[1].body!.messages as Json[]).at(-1)!.role).toBe('user');
    // A client resuming after its first delta gets the reset (from that delta's index) before the new answer.
    const resumed = new SseClient(`${c.url}/hecate/v1/agent-chat/sessions/${id}/stream`, { 'last-event-id': firstDelta.id! });
    await resumed.done;
    const reset = resumed.events.find((e) => e.event === 'reset')!;
    expect(reset.data).toEqual({ type: 'reset', from_index: Number(firstDelta.id!.split(':')[2]), reason: 'restarted' });
    const after = resumed.events.slice(resumed.events.indexOf(reset)).filter((e) => e.event === 'delta');
    expect(after.map((e) => e.data.content).join('')).toBe('and the rest.');
    expect(draining.output()).toContain('draining worker handed its agent chat turn over');
    await survivor.stop('SIGTERM');
  });
});
