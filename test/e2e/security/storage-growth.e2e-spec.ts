import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type Stack } from '../../support/harness';
import { sql } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { Client, Json, TOKEN } from '../tasks/tasks-harness';

const FILE_BYTES = 40 * 1024;
const ARTIFACT_CAP = 2 * 1024 * 1024;
const RUN_CAP = 6 * 1024 * 1024;

/**
 * What an agent run stores grows with what happened, not with its square: the conversation is checkpointed as deltas
 * (GET of any checkpoint still answers the whole conversation), a large final answer or argument is stored once (events
 * and step records carry a preview), and GATEWAY_TASK_MAX_ARTIFACT_BYTES / GATEWAY_TASK_MAX_RUN_STORED_BYTES end a run
 * that would store more with `storage_limit_exceeded`. Measured in Postgres (one process on a real database).
 */
describe('storage per agent run (real Postgres)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let stack: Stack;
  let c: Client;
  let workspace: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    workspace = mkdtempSync(join(tmpdir(), 'hecate-storage-ws-'));
    writeFileSync(join(workspace, 'big.txt'), 'abcdefghij'.repeat(FILE_BYTES / 10));
    stack = await startStack({
      mode: 'scaled',
      token: TOKEN,
      role: 'all',
      env: {
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '200',
        GATEWAY_TASK_MAX_ARTIFACT_BYTES: String(ARTIFACT_CAP),
        GATEWAY_TASK_MAX_RUN_STORED_BYTES: String(RUN_CAP),
      },
    });
    server = stack.apis[0];
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  /** Bytes a run left in Postgres: its artifacts' content, its steps' input and result, its events' data. */
  async function storedBytes(runId: string): Promise<{ total: number; largest: number; capped: number }> {
    const [r] = await sql<{ total: string; largest: string; capped: string }>(
      stack.db!.url,
      `SELECT (a.total + s.total + e.total)::bigint AS total, GREATEST(a.largest, s.largest, e.largest)::bigint AS largest,
              (a.content + s.result)::bigint AS capped FROM
         (SELECT COALESCE(sum(octet_length(content_text) + octet_length(metadata::text)), 0) AS total, COALESCE(max(octet_length(content_text)), 0) AS largest,
                 COALESCE(sum(octet_length(content_text)), 0) AS content
            FROM task_artifacts WHERE run_id = $1) a,
         (SELECT COALESCE(sum(octet_length(result) + octet_length(input::text) + octet_length(output_summary::text)), 0) AS total,
                 COALESCE(max(octet_length(result) + octet_length(input::text)), 0) AS largest, COALESCE(sum(octet_length(result)), 0) AS result
            FROM task_steps WHERE run_id = $1) s,
         (SELECT COALESCE(sum(octet_length(data::text)), 0) AS total, COALESCE(max(octet_length(data::text)), 0) AS largest FROM task_run_events WHERE run_id = $1) e`,
      [runId],
    );
    return { total: Number(r.total), largest: Number(r.largest), capped: Number(r.capped) };
  }

  async function agentRun(script: () => void): Promise<{ taskId: string; runId: string; run: Json }> {
    script();
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'go', working_directory: workspace });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 120_000);
    return { taskId, runId, run };
  }

  const reads = (n: number) => () => {
    for (let i = 0; i < n; i++) upstream.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'big.txt' } }] });
    upstream.script({ content: 'read it all' });
  };

  it('bytes per run grow linearly with tool calls (32 reads ≤ 2.2 × 16 reads), and every checkpoint reads back whole', async () => {
    const small = await agentRun(reads(16));
    const large = await agentRun(reads(32));
    expect([small.run, large.run].map((r) => `${r.status} ${r.last_error ?? ''}`.trim())).toEqual(['completed', 'completed']);
    const [b16, b32] = [await storedBytes(small.runId), await storedBytes(large.runId)];
    // The reads themselves are 16 × 40 KiB and 32 × 40 KiB; a quadratic checkpoint would be ~4×.
    expect(b32.total / b16.total).toBeLessThanOrEqual(2.2);
    expect(b32.total).toBeLessThan(32 * FILE_BYTES * 3);

    const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${large.taskId}/runs/${large.runId}/artifacts`)) as unknown as Json[];
    const checkpoints = artifacts.filter((a) => a.kind === 'agent_conversation');
    expect(checkpoints.length).toBeGreaterThan(32);
    const whole = async (a: Json) => JSON.parse((await c.ok('GET', `/hecate/v1/tasks/${large.taskId}/runs/${large.runId}/artifacts/${a.id}`)).content_text);
    const last = await whole(checkpoints.at(-1)!);
    expect(last.messages.filter((m: Json) => m.role === 'tool')).toHaveLength(32);
    expect(last.messages.filter((m: Json) => m.role === 'tool').every((m: Json) => m.content.length === FILE_BYTES)).toBe(true);
    // The final answer is the last assistant message (`final_last`), kept once.
    expect(last.final_last).toBe(true);
    expect(last.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'read it all' });
    const middle = await whole(checkpoints[Math.floor(checkpoints.length / 2)]);
    expect(middle.messages.length).toBeGreaterThan(2);
    expect(middle.messages.length).toBeLessThan(last.messages.length);
    expect(last.messages.slice(0, middle.messages.length)).toEqual(middle.messages);
  });

  it('a large final answer and a large tool argument are stored about once, not once per event and artifact', async () => {
    const answer = 'z'.repeat(1536 * 1024);
    const final = await agentRun(() => upstream.script({ content: answer }));
    expect(final.run.status).toBe('completed');
    expect((await storedBytes(final.runId)).total).toBeLessThan(answer.length * 2.5);
    const events = await c.events(final.taskId, final.runId);
    expect(events.find((e) => e.type === 'assistant.final_answer')?.data).toMatchObject({ truncated: true, bytes: answer.length });
    const summary = ((await c.ok('GET', `/hecate/v1/tasks/${final.taskId}/runs/${final.runId}/artifacts`)) as unknown as Json[]).find(
      (a) => a.kind === 'summary',
    )!;
    expect((await c.ok('GET', `/hecate/v1/tasks/${final.taskId}/runs/${final.runId}/artifacts/${summary.id}`)).content_text).toBe(answer);

    const pad = 'p'.repeat(1536 * 1024);
    const arg = await agentRun(() => {
      upstream.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'big.txt', pad } }] });
      upstream.script({ content: 'done' });
    });
    expect(arg.run.status).toBe('completed');
    expect((await storedBytes(arg.runId)).total).toBeLessThan(pad.length * 2.5);
  });

  it('an answer over the per-artifact cap, or a run over the per-run cap, fails the run with storage_limit_exceeded and stores nothing over the caps', async () => {
    const huge = await agentRun(() => upstream.script({ content: 'h'.repeat(ARTIFACT_CAP + 1024) }));
    expect({ status: huge.run.status, kind: huge.run.error_kind }).toEqual({ status: 'failed', kind: 'storage_limit_exceeded' });
    expect(huge.run.last_error).toMatch(/GATEWAY_TASK_MAX_ARTIFACT_BYTES/);
    expect((await storedBytes(huge.runId)).largest).toBeLessThanOrEqual(ARTIFACT_CAP);
    const events = await c.events(huge.taskId, huge.runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { code: 'storage_limit_exceeded' } });

    const many = await agentRun(reads(RUN_CAP / FILE_BYTES));
    expect({ status: many.run.status, kind: many.run.error_kind }).toEqual({ status: 'failed', kind: 'storage_limit_exceeded' });
    expect(many.run.last_error).toMatch(/GATEWAY_TASK_MAX_RUN_STORED_BYTES/);
    // What the cap counts (artifacts' content, steps' results) stays under it; events and step records are small.
    const stored = await storedBytes(many.runId);
    expect(stored.capped).toBeLessThanOrEqual(RUN_CAP);
    expect(stored.total).toBeLessThan(RUN_CAP * 1.1);
  });
});
