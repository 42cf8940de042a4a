import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import type { ScratchDatabase } from '../../support/infra';
import { waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { Client, expectGapFree, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

const LEASE_MS = 2000;

/**
 * The agent loop on scaled workers under kill -9 (real Postgres, Redis and worker processes, a 2 s lease): the run
 * is taken over by the other worker and completes; a model call cut off mid-stream is made again (it has no side
 * effect), a tool call cut off mid-run is never run again and the model is told its outcome is unknown; the event
 * sequence has no gap and one terminal state.
 */
describe('agent loop under faults (scaled)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
      GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
      GATEWAY_QUEUE_LOCK_MS: '2000',
    });
    db = s.db;
    env = s.env;
    c = new Client((await procs.start('api', env)).url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });
  beforeEach(() => upstream.reset());

  const chatRequests = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions');

  const finish = async (taskId: string, runId: string, survivor: ServerProcess) => {
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 30_000);
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    expect(events.filter((e) => ['run.finished', 'run.failed', 'run.cancelled'].includes(e.type as string))).toHaveLength(1);
    const starts = events.filter((e) => e.type === 'run.started');
    expect(starts.at(-1)!.data.worker).toContain(`:${survivor.proc.pid}:`);
    return { run, events };
  };

  it('kill -9 mid model stream: the other worker makes the call again and the run completes', async () => {
    upstream.script({ content: 'a slow reply that the first worker never finishes reading', chunks: 40, chunkIntervalMs: 100 });
    upstream.script({ content: 'Finished on the second worker.' });
    const doomed = await procs.start('worker', env);
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'answer slowly' });
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 20_000);
    const survivor = await procs.start('worker', env);
    await doomed.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    expect(chatRequests()).toHaveLength(2);
    expect(events.find((e) => e.type === 'assistant.final_answer')!.data.text).toBe('Finished on the second worker.');
    await survivor.stop('SIGTERM');
  });

  it('kill -9 mid tool call: the call is not run again and the model hears "outcome unknown"; the run completes', async () => {
    upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo start >> log.txt; sleep 30; echo end >> log.txt' } }] });
    upstream.script({ content: 'The command may or may not have finished.' });
    const doomed = await procs.start('worker', env);
    const { taskId, runId, run: started } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'run it' });
    const log = join(started.workspace_path as string, 'log.txt');
    await waitFor(() => existsSync(log) && readFileSync(log, 'utf8') === 'start\n', { timeoutMs: 20_000, what: 'the tool command to start' });
    const survivor = await procs.start('worker', env);
    await doomed.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    // Not run again (one start), and killed with its worker (no end).
    expect(readFileSync(log, 'utf8')).toBe('start\n');
    expect(events.filter((e) => e.type === 'tool.invoked' && e.data.tool_name === 'shell_exec')).toHaveLength(1);
    const requests = chatRequests();
    expect(requests).toHaveLength(2);
    expect(((requests[1].body as Json).messages as Json[]).at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('outcome unknown') });
    await survivor.stop('SIGTERM');
  });
});
