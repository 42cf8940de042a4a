import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type Stack } from '../../support/harness';
import { sql, waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { Client, Json, TOKEN } from '../tasks/tasks-harness';

const NUL = '\u0000';
/** What a stored NUL becomes: Postgres text and jsonb cannot hold U+0000. */
const STORED = '\uFFFD';

/**
 * A model answer or tool arguments carrying NUL (U+0000): Postgres refuses it in text and jsonb, and the upstream call
 * was already made and billed. Every path that records model output stores it with NUL replaced by U+FFFD and answers
 * the client as usual: the /v1 client gets the upstream's content unchanged, runs and turns complete, the rows exist.
 * One server (api and worker in one process) on a real Postgres.
 */
describe('NUL in model output (real Postgres)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let stack: Stack;
  let c: Client;
  let workspace: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    workspace = mkdtempSync(join(tmpdir(), 'hecate-nul-ws-'));
    writeFileSync(join(workspace, 'notes.txt'), 'plain text\n');
    stack = await startStack({
      mode: 'scaled',
      token: TOKEN,
      role: 'all',
      env: { ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '6' },
    });
    server = stack.apis[0];
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('/v1/chat/completions recorded into a chat session: 200 with the content as the upstream sent it, the exchange stored', async () => {
    const session = await c.ok('POST', '/hecate/v1/chat/sessions', { title: 'nul' });
    for (const stream of [false, true]) {
      upstream.script({ content: `a${NUL}b${NUL}c` });
      const r = await c.call('POST', '/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        session_id: session.id,
        stream,
      });
      expect(r.status).toBe(200);
      if (stream) expect(r.text).toContain('\\u0000');
      else expect(r.body.choices[0].message.content).toBe(`a${NUL}b${NUL}c`);
    }
    const got = await c.ok('GET', `/hecate/v1/chat/sessions/${session.id}`);
    const assistants = (got.messages as Json[]).filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.content)).toEqual([`a${STORED}b${STORED}c`, `a${STORED}b${STORED}c`]);
  });

  it('/v1/responses with store: 200 with the content, and the stored response is retrievable', async () => {
    for (const stream of [false, true]) {
      upstream.script({ content: `x${NUL}y` });
      upstream.script({ toolCalls: [{ name: 'lookup', arguments: `{"q":"a\\u0000b"}` }] });
      const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
      const text = await c.call('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'hi', store: true, stream });
      const call = await c.call('POST', '/v1/responses', { model: 'gpt-4o-mini', input: 'look it up', store: true, stream, tools });
      expect([text.status, call.status]).toEqual([200, 200]);
      if (stream) continue;
      expect(text.body.output_text ?? text.body.output[0].content[0].text).toBe(`x${NUL}y`);
      const stored = await c.call('GET', `/v1/responses/${text.body.id}`);
      expect(stored.status).toBe(200);
      expect(JSON.stringify(stored.body)).toContain(`x${STORED}y`);
      expect((await c.call('GET', `/v1/responses/${call.body.id}`)).status).toBe(200);
    }
  });

  it('an agent_loop run whose model sends NUL in tool arguments and in its final answer completes, with its rows', async () => {
    upstream.script({ toolCalls: [{ name: 'read_file', arguments: `{"path":"notes.txt","note":"n\\u0000"}` }] });
    upstream.script({ toolCalls: [{ name: 'grep', arguments: { pattern: `x${NUL}y` } }] });
    upstream.script({ content: `done${NUL}here` });
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'read', working_directory: workspace });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled']);
    expect({ status: run.status, error: run.last_error }).toMatchObject({ status: 'completed' });
    const events = await c.events(taskId, runId);
    expect(events.find((e) => e.type === 'assistant.final_answer')?.data.text).toBe(`done${STORED}here`);
    expect(events.filter((e) => e.type === 'assistant.tool_call_proposed')).toHaveLength(2);
    const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
    const conv = artifacts.filter((a) => a.kind === 'agent_conversation').at(-1);
    const full = await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts/${conv!.id}`);
    // The checkpoint is JSON text: the NUL is kept as its escape there, exactly as the model sent it.
    expect(JSON.parse(full.content_text ?? full.content).messages.at(-1).content).toBe(`done${NUL}here`);
    const steps = await sql<{ n: number }>(stack.db!.url, `SELECT count(*)::int AS n FROM task_steps WHERE run_id = $1 AND status = 'completed'`, [runId]);
    expect(steps[0].n).toBeGreaterThanOrEqual(3);
  });

  it('Agent Chat: a model turn and an agent turn whose model sends NUL complete, and the transcript holds them', async () => {
    const s = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' });
    upstream.script({ content: `model${NUL}turn` });
    const r1 = await c.call('POST', `/hecate/v1/agent-chat/sessions/${s.id}/messages`, { content: 'hi' });
    expect(r1.status).toBe(200);
    upstream.script({ toolCalls: [{ name: 'read_file', arguments: `{"path":"notes.txt","why":"\\u0000"}` }] });
    upstream.script({ content: `agent${NUL}turn` });
    const r2 = await c.call('POST', `/hecate/v1/agent-chat/sessions/${s.id}/messages`, { content: 'read it', runtime_kind: 'agent', workspace });
    expect(r2.status).toBe(200);
    const got = await waitFor(
      async () => {
        const v = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}`);
        return v.active_turn === null || v.active_turn === undefined ? v : undefined;
      },
      { timeoutMs: 30_000, what: 'the turns to end' },
    );
    const assistants = (got.messages as Json[]).filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => [m.status, m.content])).toEqual([
      ['completed', `model${STORED}turn`],
      ['completed', `agent${STORED}turn`],
    ]);
  });
});
