import { connect, type Socket } from 'node:net';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { dashboardQueries, metricNamesOf } from '../../support/dashboards';
import { waitFor, type ScratchDatabase } from '../../support/infra';
import { Exposition, scrape } from '../../support/prometheus';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { SseReader } from '../../support/sse';
import { Client, Json, Processes, scaledEnv, SseClient, TOKEN } from '../tasks/tasks-harness';

const PROVIDER_KEY = 'sk-metrics-e2e-upstream-0001';
const MODEL = 'gpt-4o-mini';
const CONCURRENCY = 3;

/**
 * /metrics of a scaled deployment (api and worker processes on Postgres and Redis, a fake upstream) after a short
 * scripted load: /v1 calls (one streamed, one failing), a shell run behind an approval, an agent_loop run with a tool
 * call, an agent chat model turn, SSE subscribers that reconnect with Last-Event-ID, a consumer too slow to keep. Then
 * every metric of the contract is exposed with sane values, and every metric every dashboard panel queries is exposed
 * by the api or the worker.
 */
describe('metrics and dashboards (scaled: api + worker)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let db: ScratchDatabase;
  let api: ServerProcess;
  let worker: ServerProcess;
  let c: Client;
  let pendingDuringApproval: Exposition;
  let apiScrape: Exposition;
  let workerScrape: Exposition;
  let stats: Json;

  const v1 = (body: Json) =>
    fetch(`${api.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** A shell task run through its approval gate; the deployment's scrape is taken while the approval waits. */
  async function shellRunThroughApproval(): Promise<{ taskId: string; runId: string }> {
    const started = await c.startTask({ execution_kind: 'shell', shell_command: 'echo metrics', title: 'metrics' });
    expect(started.run.status).toBe('awaiting_approval');
    pendingDuringApproval = await scrape(api.url);
    const [approval] = (await c.ok('GET', `/hecate/v1/tasks/${started.taskId}/approvals`)) as unknown as Json[];
    // A fixed wait on purpose: the approval's wait time is what the histogram measures (past its 1 s bucket).
    await new Promise((r) => setTimeout(r, 1100));
    await c.ok('POST', `/hecate/v1/tasks/${started.taskId}/approvals/${approval.id}/resolve`, { decision: 'approve' });
    expect(await c.waitStatus(started.taskId, started.runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    return started;
  }

  /** The run's event stream read to its end, then again from Last-Event-ID 2 (a replay from Postgres). */
  async function runStreamTwice(taskId: string, runId: string): Promise<void> {
    const url = `${api.url}/hecate/v1/tasks/${taskId}/runs/${runId}/stream`;
    const first = new SseClient(url);
    await first.done;
    expect({ status: first.status, last: first.events.at(-1)?.event }).toEqual({ status: 200, last: 'done' });
    const again = new SseClient(url, { 'last-event-id': '2' });
    await again.done;
    expect(again.events[0].id).toBe('3');
  }

  /** The public feed of the task: a few events, disconnect, reconnect after the second one's cursor. */
  async function feedReconnect(taskId: string): Promise<void> {
    const url = `${api.url}/hecate/v1/events/stream?task_id=${taskId}`;
    const first = new SseClient(url);
    await first.waitFrames(3);
    first.close();
    const cursor = first.frames[1].id!;
    const again = new SseClient(url, { 'last-event-id': cursor });
    await again.waitFrames(1);
    expect(Number(again.frames[0].id)).toBeGreaterThan(Number(cursor));
    again.close();
  }

  /** A client that sends its request and never reads: disconnected once the server's backlog for it passes the bound. */
  async function slowConsumer(taskId: string, runId: string): Promise<void> {
    const sseStats = async () => (await c.ok('GET', '/hecate/v1/system/stats')).sse as Json;
    const before = (await sseStats()).slow_consumer_disconnects as number;
    const lazy: Socket = connect(Number(new URL(api.url).port), '127.0.0.1');
    await new Promise<void>((r) => lazy.once('connect', () => r()));
    lazy.on('error', () => undefined);
    lazy.write(`GET /hecate/v1/events/stream?task_id=${taskId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    lazy.pause();
    const big = 'x'.repeat(64 * 1024);
    for (let posted = 0; posted < 2000 && ((await sseStats()).slow_consumer_disconnects as number) === before; posted += 8) {
      await Promise.all(Array.from({ length: 8 }, () => c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { big } })));
    }
    lazy.destroy();
  }

  async function agentLoopWithToolCall(): Promise<{ taskId: string; runId: string }> {
    upstream.script({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    upstream.script({ content: 'Listed.', chunks: 3 });
    const started = await c.startTask({ execution_kind: 'agent_loop', requested_model: MODEL, prompt: 'List the workspace' });
    expect(await c.waitStatus(started.taskId, started.runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    // Its live stream resumed after index 1: served from the buffer.
    const live = new SseClient(`${api.url}/hecate/v1/tasks/${started.taskId}/runs/${started.runId}/live`, { 'last-event-id': '1' });
    await live.done;
    expect(live.events.at(-1)?.event).toBe('done');
    return started;
  }

  async function agentChatTurnAndResume(): Promise<void> {
    const session = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: MODEL });
    upstream.script({ content: 'one two three four ', chunks: 4 });
    const turn = new SseReader(`${api.url}/hecate/v1/agent-chat/sessions/${session.id}/messages`, { body: { content: 'count', stream: true }, token: TOKEN });
    await turn.done;
    const deltas = turn.events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBe(4);
    const again = new SseClient(`${api.url}/hecate/v1/agent-chat/sessions/${session.id}/stream`, { 'last-event-id': deltas[1].id! });
    await again.done;
    expect(again.events.filter((e) => e.event === 'delta').map((e) => e.id)).toEqual(deltas.slice(2).map((e) => e.id));
  }

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: [MODEL], requireKey: PROVIDER_KEY });
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { key: PROVIDER_KEY, kind: 'cloud' }),
      GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true',
      GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
      GATEWAY_TASK_QUEUE_WORKERS: String(CONCURRENCY),
    });
    db = s.db;
    [api, worker] = await Promise.all([procs.start('api', s.env), procs.start('worker', s.env)]);
    c = new Client(api.url);

    // The load, in order (the fake upstream's scripts are consumed in order).
    for (let i = 0; i < 2; i++) expect((await v1({ model: MODEL, messages: [{ role: 'user', content: `hello ${i}` }] })).status).toBe(200);
    const streamed = await v1({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'stream' }] });
    expect(streamed.status).toBe(200);
    expect((await streamed.text()).trim().endsWith('data: [DONE]')).toBe(true);
    expect((await v1({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })).status).toBeGreaterThanOrEqual(400);
    const shell = await shellRunThroughApproval();
    await runStreamTwice(shell.taskId, shell.runId);
    await feedReconnect(shell.taskId);
    await agentLoopWithToolCall();
    await agentChatTurnAndResume();
    await slowConsumer(shell.taskId, shell.runId);
    stats = await c.ok('GET', '/hecate/v1/system/stats');
    // Counters of work that ends asynchronously (a turn's end, a doorbell) have landed once the numbers stop moving.
    await waitFor(async () => (await scrape(worker.url)).sum('hecate_agent_turns_total') >= 1, { what: 'the agent chat turn counted' });
    [apiScrape, workerScrape] = await Promise.all([scrape(api.url), scrape(worker.url)]);
  }, 240_000);

  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });

  it('HTTP: by route pattern and status, never a raw URL; an SSE request counted once, when its stream opened', () => {
    expect(apiScrape.sum('hecate_http_request_duration_seconds_count', { route: '/v1/chat/completions', status: '200' })).toBe(3);
    expect(apiScrape.sum('hecate_http_request_duration_seconds_count', { route: '/hecate/v1/tasks/:task_id/runs/:run_id/stream', status: '200' })).toBe(2);
    expect(apiScrape.sum('hecate_http_request_duration_seconds_count', { route: '/hecate/v1/events/stream', status: '200' })).toBeGreaterThanOrEqual(2);
    const routes = new Set(apiScrape.series('hecate_http_request_duration_seconds_count').map((s) => s.labels.route));
    for (const route of routes) expect(route === 'unmatched' || route.startsWith('/')).toBe(true);
    // No id in a route: outside its `:task_id`-style parameters, no `task_…`/`run_…` id and no UUID.
    expect([...routes].some((r) => /task_|run_|[0-9a-f]{8}-/.test(r.replace(/:[a-z_]+/g, '')))).toBe(false);
    // SSE opens fast; a stream that lasted seconds is not in the histogram as a seconds-long request.
    const sseSlow = apiScrape.sum('hecate_http_request_duration_seconds_bucket', { route: '/hecate/v1/events/stream', le: '1' });
    expect(sseSlow).toBe(apiScrape.sum('hecate_http_request_duration_seconds_count', { route: '/hecate/v1/events/stream' }));
  });

  it('runs and steps: terminal runs by kind and status with durations, steps by kind, on the worker', () => {
    expect(workerScrape.sum('hecate_runs_total', { kind: 'shell', status: 'completed' })).toBe(1);
    expect(workerScrape.sum('hecate_runs_total', { kind: 'agent_loop', status: 'completed' })).toBe(1);
    expect(workerScrape.sum('hecate_run_duration_seconds_count', { kind: 'shell', status: 'completed' })).toBe(1);
    expect(workerScrape.sum('hecate_run_duration_seconds_sum', { kind: 'shell', status: 'completed' })).toBeGreaterThan(0);
    expect(workerScrape.sum('hecate_step_duration_seconds_count', { kind: 'workspace', status: 'completed' })).toBe(2);
    expect(workerScrape.sum('hecate_step_duration_seconds_count', { kind: 'tool', status: 'completed' })).toBeGreaterThanOrEqual(1);
    expect(apiScrape.has('hecate_runs_total')).toBe(false);
  });

  it('queues: jobs by state and oldest waiting age from both processes (KEDA reads waiting), capacity from the worker, in stats too', () => {
    for (const e of [apiScrape, workerScrape]) {
      for (const state of ['waiting', 'active', 'delayed']) expect(e.series('hecate_queue_jobs', { queue: 'runs', state })).toHaveLength(1);
      expect(e.sum('hecate_queue_oldest_waiting_age_seconds', { queue: 'runs' })).toBeGreaterThanOrEqual(0);
    }
    expect(workerScrape.sum('hecate_queue_capacity', { queue: 'runs' })).toBe(CONCURRENCY);
    expect(workerScrape.sum('hecate_queue_capacity', { queue: 'system' })).toBe(CONCURRENCY);
    expect(stats.queue_capacity).toEqual({ runs: CONCURRENCY, system: CONCURRENCY });
    expect(stats.agent_adapter_approval_mode).toEqual(expect.any(String));
    for (const kind of ['run', 'turn', 'adapter']) expect(workerScrape.series('hecate_lease_reclaims_total', { kind })[0]?.value).toBe(0);
  });

  it('approvals: pending while the run waited, then the wait by kind and outcome', () => {
    expect(pendingDuringApproval.sum('hecate_approvals_pending', { kind: 'task' })).toBe(1);
    expect(apiScrape.sum('hecate_approvals_pending', { kind: 'task' })).toBe(0);
    expect(apiScrape.series('hecate_approvals_pending', { kind: 'agent_chat' })).toHaveLength(1);
    expect(apiScrape.sum('hecate_approval_wait_seconds_count', { kind: 'task', outcome: 'approved' })).toBe(1);
    expect(apiScrape.sum('hecate_approval_wait_seconds_bucket', { kind: 'task', outcome: 'approved', le: '1' })).toBe(0);
    expect(apiScrape.sum('hecate_approval_wait_seconds_bucket', { kind: 'task', outcome: 'approved', le: '5' })).toBe(1);
  });

  it('SSE and events: connections by stream, replays from the store, slow consumers, publish lag, live-stream resumes', () => {
    for (const stream of ['run_events', 'events_feed', 'agent_chat', 'gateway']) expect(apiScrape.series('hecate_sse_connections', { stream })).toHaveLength(1);
    expect(apiScrape.sum('hecate_sse_connections')).toBeGreaterThanOrEqual(0);
    expect(apiScrape.sum('hecate_sse_replayed_frames_total', { stream: 'run_events' })).toBeGreaterThan(0);
    expect(apiScrape.sum('hecate_sse_replayed_frames_total', { stream: 'events_feed' })).toBeGreaterThan(0);
    expect(apiScrape.sum('hecate_sse_slow_consumer_disconnects_total', { stream: 'events_feed' })).toBe(1);
    expect(apiScrape.sum('hecate_sse_slow_consumer_disconnects_total', { stream: 'run_events' })).toBe(0);
    for (const e of [apiScrape, workerScrape]) {
      expect(e.sum('hecate_event_publish_lag_seconds_count')).toBeGreaterThan(0);
      expect(e.sum('hecate_event_publish_lag_seconds_sum') / e.sum('hecate_event_publish_lag_seconds_count')).toBeLessThan(1);
    }
    expect(apiScrape.sum('hecate_live_stream_resumes_total', { outcome: 'buffer' })).toBe(2);
    expect(apiScrape.sum('hecate_live_stream_resumes_total', { outcome: 'fallback' })).toBe(0);
  });

  it('agents: turns by runtime and status, tool calls by tool and outcome, MCP cache and adapter processes on the worker', () => {
    expect(workerScrape.sum('hecate_agent_turns_total', { runtime: 'model', status: 'completed' })).toBe(1);
    expect(workerScrape.sum('hecate_agent_tool_calls_total', { tool: 'list_dir', outcome: 'ok' })).toBe(1);
    expect(
      workerScrape
        .series('hecate_mcp_cache_entries')
        .map((s) => s.labels.state)
        .sort(),
    ).toEqual(['idle', 'in_use']);
    const adapters = workerScrape.series('hecate_adapter_processes');
    expect(adapters.length).toBeGreaterThan(0);
    expect(adapters.every((s) => s.value === 0)).toBe(true);
    expect(apiScrape.has('hecate_adapter_processes')).toBe(false);
  });

  it('gateway: every model call once, in GenAI form (tokens, duration, TTFT) and by endpoint, provider, model, status, with cost', () => {
    const op = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'fake', gen_ai_request_model: MODEL };
    expect(apiScrape.sum('gen_ai_client_operation_duration_seconds_count', { ...op, error_type: '' })).toBe(3);
    expect(apiScrape.sum('gen_ai_client_token_usage_count', { ...op, gen_ai_token_type: 'input' })).toBe(3);
    expect(apiScrape.sum('gen_ai_client_token_usage_sum', { ...op, gen_ai_token_type: 'output' })).toBeGreaterThan(0);
    expect(apiScrape.sum('gen_ai_server_time_to_first_token_seconds_count', op)).toBe(1);
    // The agent loop's two model calls and the agent chat turn ran on the worker.
    expect(workerScrape.sum('gen_ai_client_operation_duration_seconds_count', { ...op, error_type: '' })).toBe(3);
    expect(workerScrape.sum('hecate_gateway_requests_total', { endpoint: 'agent_loop', provider: 'fake', model: MODEL, status: 'ok' })).toBe(2);
    expect(workerScrape.sum('hecate_gateway_requests_total', { endpoint: 'agent_chat', provider: 'fake', model: MODEL, status: 'ok' })).toBe(1);
    expect(apiScrape.sum('hecate_gateway_requests_total', { endpoint: '/v1/chat/completions', provider: 'fake', model: MODEL, status: 'ok' })).toBe(3);
    expect(apiScrape.sum('hecate_gateway_requests_total', { endpoint: '/v1/chat/completions', provider: 'none', model: 'none', status: 'error' })).toBe(1);
    expect(JSON.stringify(apiScrape.series('hecate_gateway_requests_total'))).not.toContain('no-such-model');
    // gpt-4o-mini has a built-in price (the provider is a cloud one): spend is positive.
    expect(apiScrape.sum('hecate_gateway_cost_usd_total', { provider: 'fake', model: MODEL })).toBeGreaterThan(0);
  });

  it('every metric every dashboard panel queries is exposed by the api or the worker', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(60);
    const missing: string[] = [];
    for (const q of queries) {
      for (const name of metricNamesOf(q.expr)) {
        const exposed = apiScrape.has(name) || workerScrape.has(name);
        const family = apiScrape.familyOf(name);
        const declared = apiScrape.types.has(family) || workerScrape.types.has(family);
        if (!exposed || !declared) missing.push(`${q.dashboard} "${q.panel}": ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('serves no high-cardinality labels: no ids, URLs or prompt text in any label value', () => {
    for (const e of [apiScrape, workerScrape]) {
      for (const s of e.samples) {
        for (const v of Object.values(s.labels)) {
          expect(v).not.toMatch(/[0-9a-f]{16}|https?:\/\/|hello|count|List the workspace/);
        }
      }
    }
  });
});
