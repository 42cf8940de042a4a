import { LiveReply, type AgentChatFrame } from '@sdk';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { startStack, type Stack } from '../../support/harness';
import { waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import type { SseEvent } from '../../support/sse';
import { Client, Json, SseClient, takeoverEnv, TOKEN } from '../tasks/tasks-harness';

const LEASE_MS = 2000;

/**
 * Issue 27, a taken-over call never repeats its text (docs/takeover.md), on real processes (Postgres, Redis, two api
 * and up to two worker processes, a 2 s lease, kill -9): the worker streaming an Agent Chat model turn or an agent-loop
 * model call is killed, the other worker makes the call again. Against an upstream that answers anew after a trailing
 * assistant message (OpenAI protocol), the call is made from the start: the live stream carries a `reset`, a client
 * that applies it shows exactly the stored text, one resuming later with Last-Event-ID gets the reset too, and the
 * stored text is the new attempt's alone. Against one that continues a prefill (Anthropic protocol by default, or an
 * OpenAI-protocol model with the `assistant_prefill` override), the partial is continued: no reset, nothing repeated.
 */
describe('takeover of a streaming model call (scaled, kill -9)', () => {
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let stack: Stack;
  let apiA: ServerProcess;
  let apiB: ServerProcess;
  let a: Client;

  beforeAll(async () => {
    openai = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    // Anthropic's Messages API continues a trailing assistant message: so does this fake.
    anthropic = await startFakeUpstream({ models: ['claude-sonnet-4-5'], continuePrefill: true });
    stack = await startStack({
      mode: 'scaled',
      token: TOKEN,
      apis: 2,
      env: {
        ...takeoverEnv(openai, LEASE_MS),
        ...providerEnv('anth', anthropic, { kind: 'local', protocol: 'anthropic', key: 'sk-ant-test' }),
      },
    });
    [apiA, apiB] = stack.apis;
    a = new Client(apiA.url);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await openai?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    openai.reset();
    anthropic.reset();
  });

  const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i} `).join('');
  const completions = (u: FakeUpstream) => u.requests.filter((r) => r.path === '/v1/chat/completions' || r.path === '/v1/messages');
  const lastMessage = (u: FakeUpstream, n: number) => (completions(u)[n].body!.messages as Json[]).at(-1)!;
  const setPrefill = (value: boolean | null) =>
    value === null
      ? a.call('DELETE', '/hecate/v1/model-capabilities/overrides?provider=fake&model=gpt-4o-mini')
      : a.ok('PUT', '/hecate/v1/model-capabilities/overrides', { provider: 'fake', model: 'gpt-4o-mini', tool_calling: 'parallel', assistant_prefill: value });

  /** What a client shows from raw SSE frames with numeric or `<turn>:<stream>:<index>` ids: deltas folded, resets applied. */
  function shownText(events: SseEvent[]): string {
    const parts: Array<{ index: number; text: string }> = [];
    for (const e of events) {
      const index = Number(String(e.id).split(':').at(-1));
      if (e.event === 'delta' && typeof e.data.content === 'string') parts.push({ index, text: e.data.content });
      if (e.event === 'reset') parts.splice(0, parts.length, ...parts.filter((p) => p.index < (e.data.from_index as number)));
    }
    return parts.map((p) => p.text).join('');
  }

  describe('Agent Chat model turn', () => {
    /**
     * A model turn whose worker is killed after 6 deltas of a slow reply; the SDK follows the session stream (with its
     * LiveReply) throughout. Returns the stored reply, every frame the SDK delivered, what it showed right before the
     * settled message, and the Last-Event-ID a client had before the kill.
     */
    async function killMidTurn(session: Json) {
      const doomed = await stack.start('worker');
      const id = (await a.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', ...session })).id as string;
      const frames: AgentChatFrame[] = [];
      const reply = new LiveReply();
      let shownBeforeMessage: string | undefined;
      const follow = (async () => {
        for await (const f of a.api.streams.agentChat(id)) {
          if (f.event === 'message' && 'role' in f.data && f.data.role === 'assistant') shownBeforeMessage = reply.text;
          reply.apply(f);
          frames.push(f);
        }
      })();
      const waiting = a.call('POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content: 'a long answer please' });
      await waitFor(() => frames.filter((f) => f.event === 'delta').length >= 6 || undefined, { timeoutMs: 30_000, what: '6 deltas' });
      const cut = frames.filter((f) => f.event === 'delta').at(-1)!.id!;
      const survivor = await stack.start('worker');
      await doomed.stop('SIGKILL');
      const answer = await waiting;
      await follow;
      expect(answer.status).toBe(200);
      const stored = answer.body.data.messages[1];
      expect(stored.status).toBe('completed');
      // Frames with an index arrive once each.
      const ids = frames.filter((f) => f.id !== undefined).map((f) => f.id);
      expect(new Set(ids).size).toBe(ids.length);
      // A client that resumes later, on the other api, from where it was before the kill.
      const late = new SseClient(`${apiB.url}/hecate/v1/agent-chat/sessions/${id}/stream`, { 'last-event-id': cut });
      await late.done;
      await survivor.stop('SIGTERM');
      return { id, stored: stored.content as string, frames, shownBeforeMessage, cut, late: late.events, final: reply.text };
    }

    it('an upstream that answers anew: the call is made from the start after a reset frame; the stored reply is the new answer alone', async () => {
      const partial = words(40, 'slow');
      const fresh = 'A whole new answer, given from its start.';
      openai.script({ content: partial, chunks: 40, chunkIntervalMs: 250 });
      openai.script({ content: fresh, chunks: 6 });
      const r = await killMidTurn({ model: 'gpt-4o-mini', provider: 'fake' });

      // Stored: exactly the final attempt's text — not the partial followed by a fresh answer.
      expect(r.stored).toBe(fresh);
      // The second call was made from the start (no trailing assistant message).
      expect(completions(openai)).toHaveLength(2);
      expect(lastMessage(openai, 1)).toMatchObject({ role: 'user', content: 'a long answer please' });
      // The SDK saw one reset, from the first delta of the lost attempt; applying it, it showed exactly the stored text.
      const resets = r.frames.filter((f) => f.event === 'reset');
      expect(resets).toHaveLength(1);
      const firstDelta = r.frames.find((f) => f.event === 'delta')!;
      expect(resets[0].data).toEqual({ type: 'reset', from_index: Number(firstDelta.id!.split(':')[2]), reason: 'restarted' });
      expect(r.shownBeforeMessage).toBe(fresh);
      expect(r.final).toBe(fresh);
      // The late client gets the rest of the partial, the reset, the new answer and the stored message.
      const lateReset = r.late.filter((e) => e.event === 'reset');
      expect(lateReset).toHaveLength(1);
      expect(Number(lateReset[0].id!.split(':')[2])).toBeGreaterThan(Number(r.cut.split(':')[2]));
      expect(shownText(r.late)).toBe(fresh);
      expect(r.late.find((e) => e.event === 'message' && e.data.role === 'assistant')!.data.content).toBe(fresh);
    });

    it('an upstream that continues a prefill (Anthropic protocol): the partial is continued, no reset, nothing repeated', async () => {
      const answer = words(40, 'cont');
      anthropic.script({ content: answer, chunks: 40, chunkIntervalMs: 250 });
      anthropic.script({ content: answer, chunks: 40 });
      const r = await killMidTurn({ model: 'claude-sonnet-4-5', provider: 'anth' });

      const calls = completions(anthropic);
      expect(calls).toHaveLength(2);
      const prefill = lastMessage(anthropic, 1);
      expect(prefill.role).toBe('assistant');
      const prefix = typeof prefill.content === 'string' ? prefill.content : (prefill.content as Json[]).map((b) => b.text).join('');
      expect(prefix.length).toBeGreaterThan(0);
      expect(answer.startsWith(prefix)).toBe(true);
      expect(r.stored).toBe(answer);
      expect(r.frames.some((f) => f.event === 'reset')).toBe(false);
      expect(r.shownBeforeMessage).toBe(answer);
      expect(r.late.some((e) => e.event === 'reset')).toBe(false);
      expect(answer.endsWith(shownText(r.late))).toBe(true);
    });
  });

  describe('agent-loop model call', () => {
    /**
     * Two workers up, an agent_loop run whose model call streams slowly; a live client follows the run's live stream
     * and the worker that owns the run is killed after 5 deltas. Returns the final answer, the live frames, and what a
     * client resuming later from the last pre-kill index gets.
     */
    async function killMidModelCall() {
      const workers = await Promise.all([stack.start('worker'), stack.start('worker')]);
      const { taskId, runId } = await a.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'answer slowly' });
      const path = `/hecate/v1/tasks/${taskId}/runs/${runId}/live`;
      const live = new SseClient(apiA.url + path);
      await waitFor(() => live.events.filter((e) => e.event === 'delta').length >= 5 || undefined, { timeoutMs: 30_000, what: '5 deltas' });
      const cut = live.events.filter((e) => e.event === 'delta').at(-1)!.id!;
      const started = (await a.events(taskId, runId)).find((e) => e.type === 'run.started')!;
      const doomed = workers.find((w) => String(started.data.worker).includes(`:${w.proc.pid}:`))!;
      await doomed.stop('SIGKILL');
      await live.done;
      const run = await a.waitStatus(taskId, runId, ['completed', 'failed'], 30_000);
      expect(run).toMatchObject({ status: 'completed', attempts: 2 });
      const events = await a.events(taskId, runId);
      const finalAnswer = events.find((e) => e.type === 'assistant.final_answer')!.data.text as string;
      const late = new SseClient(apiB.url + path, { 'last-event-id': cut });
      await late.done;
      await Promise.all(workers.filter((w) => w !== doomed).map((w) => w.stop('SIGTERM')));
      return { finalAnswer, live: live.events, late: late.events, cut: Number(cut) };
    }

    it('an upstream that answers anew: the call is made again from the start after a reset on the live stream; the answer is the new one alone', async () => {
      const partial = words(40, 'slow');
      const fresh = 'The final answer, from its start.';
      openai.script({ content: partial, chunks: 40, chunkIntervalMs: 250 });
      openai.script({ content: fresh, chunks: 5 });
      const r = await killMidModelCall();

      expect(r.finalAnswer).toBe(fresh);
      expect(completions(openai)).toHaveLength(2);
      expect(lastMessage(openai, 1).role).toBe('user');
      const resets = r.live.filter((e) => e.event === 'reset');
      expect(resets).toHaveLength(1);
      expect(resets[0].data).toEqual({ type: 'reset', from_index: 1, reason: 'restarted' });
      expect(shownText(r.live)).toBe(fresh);
      const ids = r.live.filter((e) => e.id !== undefined).map((e) => Number(e.id));
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      // Resuming later after the last pre-kill delta: the reset is there, and the text shown is the answer.
      expect(r.late.filter((e) => e.event === 'reset')).toHaveLength(1);
      expect(shownText(r.late)).toBe(fresh);
    });

    it('an OpenAI-protocol model with the assistant_prefill override, on an upstream that continues prefills: the partial is continued, no reset', async () => {
      await setPrefill(true);
      try {
        const answer = words(40, 'cont');
        openai.script({ content: answer, chunks: 40, chunkIntervalMs: 250 });
        openai.script({ content: answer, chunks: 40, continuePrefill: true });
        const r = await killMidModelCall();

        const prefill = lastMessage(openai, 1);
        expect(prefill.role).toBe('assistant');
        expect((prefill.content as string).length).toBeGreaterThan(0);
        expect(answer.startsWith(prefill.content as string)).toBe(true);
        expect(r.finalAnswer).toBe(answer);
        expect(r.live.some((e) => e.event === 'reset')).toBe(false);
        expect(shownText(r.live)).toBe(answer);
        expect(r.late.some((e) => e.event === 'reset')).toBe(false);
      } finally {
        await setPrefill(null);
      }
    });
  });
});
