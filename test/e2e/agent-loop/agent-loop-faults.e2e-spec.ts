import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { useStack, type Stack } from '../../support/harness';
import { uniqueId, waitFor } from '../../support/infra';
import { EVERYTHING, MCP_SANDBOX_READ_PATHS, MISBEHAVING, processesMatching } from '../../support/mcp-servers';
import type { ServerProcess } from '../../support/server-process';
import { Client, expectGapFree, Json, slowReply, SseClient, takeoverEnv, TOKEN } from '../tasks/tasks-harness';

const LEASE_MS = 2000;

/**
 * The agent loop on scaled workers under kill -9 (real Postgres, Redis, api and worker processes, a 2 s lease): the
 * run is taken over by the other worker. Crashes are counted per step (docs/security.md): a model call cut off
 * mid-stream is made again once (it has no side effect), a second crash under it fails the run as `worker_lost`; a
 * tool call its worker died under is never run again — a side-effecting one is reported "outcome unknown", a
 * read-only one as lost, and the run goes on; an approval outlives the worker that asked for it; a live stream
 * outlives the api serving it. The event sequence has no gap and one terminal state.
 */
describe('agent loop under faults (scaled)', () => {
  const suite = useStack({
    mode: 'scaled',
    token: TOKEN,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({
      ...takeoverEnv(upstream, LEASE_MS),
      // MCP stdio servers run in the sandbox: the fixture (test/support) and server-everything (node_modules).
      GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
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

  const chatRequests = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions');
  const everything = { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] };
  /** `slow-append` has no readOnlyHint / idempotentHint: a side-effecting tool. */
  const fixture = { name: 'fixture', command: process.execPath, args: [MISBEHAVING] };
  const ofTool = (events: Json[], type: string, tool: string) => events.filter((e) => e.type === type && e.data.tool_name === tool);
  const lastMessages = (request: number, n: number) => ((chatRequests()[request].body as Json).messages as Json[]).slice(-n);

  const finish = async (taskId: string, runId: string, survivor: ServerProcess) => {
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 30_000);
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    expect(events.filter((e) => ['run.finished', 'run.failed', 'run.cancelled'].includes(e.type as string))).toHaveLength(1);
    const starts = events.filter((e) => e.type === 'run.started');
    expect(starts.at(-1)!.data.worker).toContain(`:${survivor.proc.pid}:`);
    return { run, events };
  };

  /**
   * Both workers up before the run is started, the one that claimed it is doomed: no replacement has to boot while a
   * few-second window (a slow stream, a long-running operation) is open, so the kill always lands inside it.
   */
  const twoWorkersThenOwner = async (taskId: string, runId: string, workers: ServerProcess[]) => {
    const started = await waitFor(async () => (await c.events(taskId, runId)).find((e) => e.type === 'run.started'), {
      timeoutMs: 20_000,
      what: 'the run to start',
    });
    const doomed = workers.find((w) => String(started.data.worker).includes(`:${w.proc.pid}:`))!;
    return { doomed, survivor: workers.find((w) => w !== doomed)! };
  };

  it('kill -9 mid model stream: the other worker makes the call again and the run completes', async () => {
    upstream.script({ content: slowReply('first', 300), chunks: 300, chunkIntervalMs: 100 });
    upstream.script({ content: 'Finished on the second worker.' });
    const workers = await Promise.all([stack.start('worker'), stack.start('worker')]);
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'answer slowly' });
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 20_000);
    const { doomed, survivor } = await twoWorkersThenOwner(taskId, runId, workers);
    await doomed.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    expect(chatRequests()).toHaveLength(2);
    expect(events.find((e) => e.type === 'tool.started' && e.data.kind === 'model' && e.data.retry)?.data).toMatchObject({ crashes: 1 });
    expect(events.find((e) => e.type === 'assistant.final_answer')!.data.text).toBe('Finished on the second worker.');
    await survivor.stop('SIGTERM');
  });

  it('kill -9 twice under the same model call: the third worker does not make it again; the run fails as worker_lost', async () => {
    upstream.script({ content: slowReply('first', 300), chunks: 300, chunkIntervalMs: 100 });
    upstream.script({ content: slowReply('second', 300), chunks: 300, chunkIntervalMs: 100 });
    const workers = await Promise.all([stack.start('worker'), stack.start('worker')]);
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'answer slowly' });
    await upstream.waitFor((u) => u.requests.some((r) => r.path === '/v1/chat/completions'), 20_000);
    const first = await twoWorkersThenOwner(taskId, runId, workers);
    await first.doomed.stop('SIGKILL');
    await upstream.waitFor((u) => u.requests.filter((r) => r.path === '/v1/chat/completions').length === 2, 30_000);
    const third = await stack.start('worker');
    await first.survivor.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, third);
    expect(run).toMatchObject({ status: 'failed', attempts: 3 });
    expect(chatRequests()).toHaveLength(2);
    expect(events.find((e) => e.type === 'tool.failed' && e.data.kind === 'model')?.data).toMatchObject({ error_kind: 'worker_lost', crashes: 2 });
    expect(events.find((e) => e.type === 'run.failed')!.data).toMatchObject({ code: 'worker_lost', message: expect.stringContaining('died while it ran') });
    await third.stop('SIGTERM');
  });

  it('kill -9 mid tool call: the call is not run again and the model hears "outcome unknown"; the run completes', async () => {
    upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo start >> log.txt; sleep 30; echo end >> log.txt' } }] });
    upstream.script({ content: 'The command may or may not have finished.' });
    const doomed = await stack.start('worker');
    const { taskId, runId, run: started } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'run it' });
    const log = join(started.workspace_path as string, 'log.txt');
    await waitFor(() => existsSync(log) && readFileSync(log, 'utf8') === 'start\n', { timeoutMs: 20_000, what: 'the tool command to start' });
    const survivor = await stack.start('worker');
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

  it('kill -9 mid MCP tool call: the side-effecting call is not run again (the model hears "outcome unknown"), the completed one before it is not repeated; the run completes', async () => {
    upstream.script({
      toolCalls: [
        { name: 'mcp__everything__echo', arguments: { message: 'before the crash' } },
        { name: 'mcp__fixture__slow-append', arguments: { tag: 'once', seconds: 30 } },
      ],
    });
    upstream.script({ content: 'The append may or may not have happened.' });
    // Tagged, so the test can count this task's server processes.
    const tag = uniqueId('mcp-fixture');
    const doomed = await stack.start('worker');
    const {
      taskId,
      runId,
      run: started,
    } = await c.startTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'echo, then append once',
      mcp_servers: [everything, { ...fixture, args: [MISBEHAVING, tag] }],
    });
    const log = join(started.workspace_path as string, 'calls.log');
    await waitFor(() => existsSync(log) && readFileSync(log, 'utf8') === 'once start\n', { timeoutMs: 20_000, what: 'the MCP tool call to start' });
    expect(processesMatching(tag)).toBeGreaterThan(0);
    const survivor = await stack.start('worker');
    await doomed.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    // Started once, never again, and its server died with its worker (no end).
    expect(readFileSync(log, 'utf8')).toBe('once start\n');
    expect(ofTool(events, 'tool.invoked', 'mcp__fixture__slow-append')).toHaveLength(1);
    expect(ofTool(events, 'tool.started', 'mcp__fixture__slow-append')).toHaveLength(1);
    expect(ofTool(events, 'tool.failed', 'mcp__fixture__slow-append')[0].data).toMatchObject({ error_kind: 'ambiguous_side_effect' });
    // The echo completed before the crash: its recorded result is reused, the call is not made again.
    expect(ofTool(events, 'tool.started', 'mcp__everything__echo')).toHaveLength(1);
    expect(chatRequests()).toHaveLength(2);
    const [echoed, unknown] = lastMessages(1, 2);
    expect(echoed).toMatchObject({ role: 'tool', content: expect.stringContaining('Echo: before the crash') });
    expect(unknown).toMatchObject({ role: 'tool', content: expect.stringContaining('outcome unknown') });
    await survivor.stop('SIGTERM');
    // The doomed worker's server died with it, and the survivor's with the survivor: none left behind.
    await waitFor(() => processesMatching(tag) === 0 || undefined, { timeoutMs: 5000, what: `no ${tag} server process left` });
  });

  it('kill -9 mid read-only MCP tool call (server-everything trigger-long-running-operation): the other worker does not run it again (worker_lost), the model hears so and the run completes', async () => {
    upstream.script({ toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 4, steps: 4 } }] });
    upstream.script({ content: 'The operation completed.' });
    const workers = await Promise.all([stack.start('worker'), stack.start('worker')]);
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'run it', mcp_servers: [everything] });
    // The server's first progress notification, relayed as tool_progress: the call is in flight on the doomed worker.
    const live = new SseClient(`${c.url}/hecate/v1/tasks/${taskId}/runs/${runId}/live`);
    await live.until((e) => e.event === 'tool_progress');
    live.close();
    const { doomed, survivor } = await twoWorkersThenOwner(taskId, runId, workers);
    await doomed.stop('SIGKILL');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run).toMatchObject({ status: 'completed', attempts: 2 });
    const name = 'mcp__everything__trigger-long-running-operation';
    expect(ofTool(events, 'tool.invoked', name)).toHaveLength(1);
    expect(ofTool(events, 'tool.started', name)).toHaveLength(1);
    expect(ofTool(events, 'tool.completed', name)).toHaveLength(0);
    expect(ofTool(events, 'tool.failed', name)[0].data).toMatchObject({ error_kind: 'worker_lost', crashes: 1 });
    expect(chatRequests()).toHaveLength(2);
    expect(lastMessages(1, 1)[0]).toMatchObject({ role: 'tool', content: expect.stringContaining('died while it ran') });
    await survivor.stop('SIGTERM');
  });

  it('kill -9 of the worker while the run waits for an approval: approving runs the approved call exactly once on the other worker, with no new model call', async () => {
    upstream.script({ toolCalls: [{ name: 'mcp__fixture__slow-append', arguments: { tag: 'approved', seconds: 0 } }] });
    upstream.script({ content: 'Appended after the approval.' });
    const doomed = await stack.start('worker');
    const {
      taskId,
      runId,
      run: started,
    } = await c.startTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'append once, with approval',
      mcp_servers: [{ ...fixture, approval_policy: 'require_approval' }],
    });
    await c.waitStatus(taskId, runId, ['awaiting_approval'], 20_000);
    await doomed.stop('SIGKILL');
    // Approved while no worker is alive: the run waits in the queue for one.
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)) as unknown as Json[];
    expect(approval).toMatchObject({ kind: 'agent_loop_tool_call', status: 'pending', details: { tool_calls: [{ name: 'mcp__fixture__slow-append' }] } });
    await c.ok('POST', `/hecate/v1/tasks/${taskId}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    const survivor = await stack.start('worker');
    const { run, events } = await finish(taskId, runId, survivor);
    expect(run.status).toBe('completed');
    expect(readFileSync(join(started.workspace_path as string, 'calls.log'), 'utf8')).toBe('approved start\napproved end\n');
    expect(ofTool(events, 'tool.invoked', 'mcp__fixture__slow-append')).toHaveLength(1);
    expect(ofTool(events, 'tool.completed', 'mcp__fixture__slow-append')).toHaveLength(1);
    expect(chatRequests()).toHaveLength(2);
    expect(lastMessages(1, 1)[0]).toMatchObject({ role: 'tool', content: 'approved appended' });
    expect(events.find((e) => e.type === 'assistant.final_answer')!.data.text).toBe('Appended after the approval.');
    await survivor.stop('SIGTERM');
  });

  it('kill -9 of the api serving a live stream: the client resumes on the other api with Last-Event-ID; the text is whole, no index repeated or missing', async () => {
    const answer = 'Ünïcödé résumé — naïve café, streamed piece by piece across two api processes. '.repeat(2);
    upstream.script({ content: answer, chunks: 60, chunkIntervalMs: 50 });
    const [doomedApi, worker] = await Promise.all([stack.start('api'), stack.start('worker')]);
    const { taskId, runId } = await new Client(doomedApi.url).startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'stream' });
    const path = `/hecate/v1/tasks/${taskId}/runs/${runId}/live`;
    const first = new SseClient(doomedApi.url + path);
    await first.waitFrames(10);
    await doomedApi.stop('SIGKILL');
    await first.done;
    const before = first.events.filter((e) => e.id !== undefined);
    expect(first.events.some((e) => e.event === 'done')).toBe(false);
    const resumed = new SseClient(c.url + path, { 'last-event-id': before.at(-1)!.id! });
    await resumed.done;
    expect(resumed.status).toBe(200);
    expect(resumed.events.at(-1)).toMatchObject({ event: 'done', data: { run_id: runId, status: 'completed' } });
    const frames = [...before, ...resumed.events.filter((e) => e.id !== undefined)];
    expect(frames.every((e) => e.event === 'delta')).toBe(true);
    expect(frames.map((e) => Number(e.id))).toEqual(frames.map((_, i) => i + 1));
    const text = frames.map((e) => (e.data as Json).content as string).join('');
    const events = await c.events(taskId, runId);
    expect(events.find((e) => e.type === 'assistant.final_answer')!.data.text).toBe(answer);
    expect(Buffer.from(text, 'utf8').equals(Buffer.from(answer, 'utf8'))).toBe(true);
    await worker.stop('SIGTERM');
  });
});
