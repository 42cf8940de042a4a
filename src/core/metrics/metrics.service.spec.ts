import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { MetricsService } from './metrics.service';

/** `name{labels} value` lines of an exposition, as [series, value]. */
const samples = (text: string): Map<string, number> =>
  new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))] as const;
      }),
  );

describe('MetricsService (core/metrics)', () => {
  let queue: InProcessRunQueue;
  let metrics: MetricsService;
  beforeEach(() => {
    queue = new InProcessRunQueue();
    metrics = new MetricsService(queue);
  });
  afterEach(() => queue.close());

  const scrape = async () => samples((await metrics.render()).body);

  it('serves Prometheus text with the process metrics and every contract metric declared', async () => {
    const { contentType, body } = await metrics.render();
    expect(contentType).toContain('text/plain');
    expect(body).toContain('# TYPE hecate_process_cpu_seconds_total counter');
    for (const name of [
      'hecate_http_request_duration_seconds',
      'hecate_runs_total',
      'hecate_run_duration_seconds',
      'hecate_step_duration_seconds',
      'hecate_queue_jobs',
      'hecate_queue_oldest_waiting_age_seconds',
      'hecate_queue_capacity',
      'hecate_lease_reclaims_total',
      'hecate_approvals_pending',
      'hecate_approval_wait_seconds',
      'hecate_sse_connections',
      'hecate_sse_replayed_frames_total',
      'hecate_sse_slow_consumer_disconnects_total',
      'hecate_event_publish_lag_seconds',
      'hecate_live_stream_resumes_total',
      'hecate_agent_turns_total',
      'hecate_agent_tool_calls_total',
      'hecate_mcp_cache_entries',
      'hecate_adapter_processes',
      'hecate_gateway_requests_total',
      'hecate_gateway_cost_usd_total',
      'gen_ai_client_token_usage',
      'gen_ai_client_operation_duration_seconds',
      'gen_ai_server_time_to_first_token_seconds',
    ]) {
      expect(body).toContain(`# TYPE ${name} `);
    }
  });

  it('starts the counters of fixed vocabularies at 0 (reclaims, slow consumers, resumes)', async () => {
    const s = await scrape();
    for (const kind of ['run', 'turn', 'adapter']) expect(s.get(`hecate_lease_reclaims_total{kind="${kind}"}`)).toBe(0);
    expect(s.get('hecate_sse_slow_consumer_disconnects_total{stream="events_feed"}')).toBe(0);
    expect(s.get('hecate_live_stream_resumes_total{outcome="fallback"}')).toBe(0);
  });

  it('reads the queues at scrape time: jobs by state and the age of the oldest waiting job', async () => {
    await queue.enqueue('system.echo', { token: 'a' });
    await queue.enqueue('system.echo', { token: 'b' }, { delayMs: 60_000 });
    await new Promise((r) => setTimeout(r, 30));
    const s = await scrape();
    expect(s.get('hecate_queue_jobs{queue="system",state="waiting"}')).toBe(1);
    expect(s.get('hecate_queue_jobs{queue="system",state="delayed"}')).toBe(1);
    expect(s.get('hecate_queue_oldest_waiting_age_seconds{queue="system"}')).toBeGreaterThanOrEqual(0.02);
    expect(s.get('hecate_queue_oldest_waiting_age_seconds{queue="runs"}')).toBe(0);
  });

  it('records what modules report through its methods', async () => {
    metrics.httpRequest('GET', '/hecate/v1/tasks/:task_id', 200, 0.003);
    metrics.runFinished('shell', 'completed', 2);
    metrics.stepFinished('tool', 'failed', 0.2);
    metrics.leaseReclaimed('turn');
    metrics.queueConsumed('runs', 4);
    metrics.approvalResolved('task', 'approved', new Date(Date.now() - 30_000), new Date());
    metrics.sseOpened('run_events');
    metrics.sseOpened('run_events');
    metrics.sseClosed('run_events', true);
    metrics.sseReplayed('events_feed', 12);
    metrics.eventsPublished(0.0004);
    metrics.liveStreamResumed('buffer');
    metrics.agentTurnEnded('model', 'completed');
    metrics.agentToolCalled('mcp', 'ok');
    metrics.modelAttempt('chat', 'openai', 'gpt-4o-mini', 0.3, '', 120, 7);
    metrics.modelAttempt('chat', 'openai', 'gpt-4o-mini', 0.1, 'http_503');
    metrics.modelFirstChunk('chat', 'openai', 'gpt-4o-mini', 0.05);
    metrics.modelRequest('/v1/chat/completions', 'fake', 'gpt-4o-mini', 'ok', 0.0025);
    metrics.modelRequest('/v1/chat/completions', '', '', 'error', 0);
    const s = await scrape();
    expect(s.get('hecate_http_request_duration_seconds_count{method="GET",route="/hecate/v1/tasks/:task_id",status="200"}')).toBe(1);
    expect(s.get('hecate_runs_total{kind="shell",status="completed"}')).toBe(1);
    expect(s.get('hecate_run_duration_seconds_bucket{kind="shell",status="completed",le="2.5"}')).toBe(1);
    expect(s.get('hecate_step_duration_seconds_count{kind="tool",status="failed"}')).toBe(1);
    expect(s.get('hecate_lease_reclaims_total{kind="turn"}')).toBe(1);
    expect(s.get('hecate_queue_capacity{queue="runs"}')).toBe(4);
    expect(s.get('hecate_approval_wait_seconds_bucket{kind="task",outcome="approved",le="15"}')).toBe(0);
    expect(s.get('hecate_approval_wait_seconds_bucket{kind="task",outcome="approved",le="60"}')).toBe(1);
    expect(s.get('hecate_sse_connections{stream="run_events"}')).toBe(1);
    expect(s.get('hecate_sse_slow_consumer_disconnects_total{stream="run_events"}')).toBe(1);
    expect(s.get('hecate_sse_replayed_frames_total{stream="events_feed"}')).toBe(12);
    expect(s.get('hecate_event_publish_lag_seconds_count')).toBe(1);
    expect(s.get('hecate_live_stream_resumes_total{outcome="buffer"}')).toBe(1);
    expect(s.get('hecate_agent_turns_total{runtime="model",status="completed"}')).toBe(1);
    expect(s.get('hecate_agent_tool_calls_total{tool="mcp",outcome="ok"}')).toBe(1);
    const op = 'gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o-mini"';
    expect(s.get(`gen_ai_client_operation_duration_seconds_count{${op},error_type=""}`)).toBe(1);
    expect(s.get(`gen_ai_client_operation_duration_seconds_count{${op},error_type="http_503"}`)).toBe(1);
    const tokens = 'gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o-mini",gen_ai_operation_name="chat"';
    expect(s.get(`gen_ai_client_token_usage_sum{gen_ai_token_type="input",${tokens}}`)).toBe(120);
    expect(s.get(`gen_ai_client_token_usage_sum{gen_ai_token_type="output",${tokens}}`)).toBe(7);
    expect(s.get(`gen_ai_server_time_to_first_token_seconds_count{${op}}`)).toBe(1);
    expect(s.get('hecate_gateway_requests_total{endpoint="/v1/chat/completions",provider="fake",model="gpt-4o-mini",status="ok"}')).toBe(1);
    expect(s.get('hecate_gateway_requests_total{endpoint="/v1/chat/completions",provider="none",model="none",status="error"}')).toBe(1);
    expect(s.get('hecate_gateway_cost_usd_total{provider="fake",model="gpt-4o-mini"}')).toBe(0.0025);
  });

  it('runs scrape-time collectors: pending approvals, MCP cache, adapter processes (known adapters at 0)', async () => {
    let pending = 2;
    metrics.countPendingApprovals('agent_chat', async () => pending);
    metrics.countMcpCache(() => ({ inUse: 1, idle: 3 }));
    const live = new Map([['codex', 2]]);
    metrics.countAdapterProcesses(() => ({ running: live, known: ['codex', 'claude-code'] }));
    let s = await scrape();
    expect(s.get('hecate_approvals_pending{kind="agent_chat"}')).toBe(2);
    expect(s.get('hecate_mcp_cache_entries{state="in_use"}')).toBe(1);
    expect(s.get('hecate_mcp_cache_entries{state="idle"}')).toBe(3);
    expect(s.get('hecate_adapter_processes{adapter="codex"}')).toBe(2);
    expect(s.get('hecate_adapter_processes{adapter="claude-code"}')).toBe(0);
    pending = 0;
    live.clear();
    s = await scrape();
    expect(s.get('hecate_approvals_pending{kind="agent_chat"}')).toBe(0);
    expect(s.get('hecate_adapter_processes{adapter="codex"}')).toBe(0);
  });

  it('a failing or hanging collector does not fail the scrape; the gauge keeps its last value', async () => {
    let calls = 0;
    metrics.countPendingApprovals('task', async () => {
      calls += 1;
      if (calls === 1) return 5;
      if (calls === 2) throw new Error('database down');
      return new Promise<number>(() => undefined);
    });
    expect((await scrape()).get('hecate_approvals_pending{kind="task"}')).toBe(5);
    expect((await scrape()).get('hecate_approvals_pending{kind="task"}')).toBe(5);
    const t0 = Date.now();
    expect((await scrape()).get('hecate_approvals_pending{kind="task"}')).toBe(5);
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
