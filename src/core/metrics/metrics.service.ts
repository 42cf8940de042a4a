import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, type Metric, Registry } from 'prom-client';
import { QUEUE_NAMES } from '@contracts/jobs';
import { within } from '@core/async/within';
import { rootLogger } from '@core/logging/logger';
import { RunQueue } from '@core/queue/run-queue.port';
import { CounterFamily, GaugeFamily, HistogramFamily } from './instruments';

/** Label vocabularies that are fixed by the product (the other labels are kinds, statuses and names from code or config). */
export type LeaseKind = 'run' | 'turn' | 'adapter';
export type ApprovalMetricKind = 'task' | 'agent_chat';
export type ApprovalOutcome = 'approved' | 'denied' | 'cancelled' | 'timed_out';
/** Every SSE stream the server writes, by what it carries. */
export type SseStreamKind = 'gateway' | 'run_events' | 'run_live' | 'events_feed' | 'chat_turn' | 'agent_chat' | 'agent_chat_active' | 'optimize_input';
export const SSE_STREAM_KINDS: readonly SseStreamKind[] = [
  'gateway',
  'run_events',
  'run_live',
  'events_feed',
  'chat_turn',
  'agent_chat',
  'agent_chat_active',
  'optimize_input',
];
/** A client resuming a live stream with a cursor: served from the buffer, from Postgres (`resume_fallback`), or reset to another stream. */
export type LiveResumeOutcome = 'buffer' | 'fallback' | 'reset';
export type AgentRuntimeKind = 'model' | 'agent' | 'external_agent';
/** A worker's MCP client cache: entries serving a call, entries idle. */
export interface McpCacheCounts {
  inUse: number;
  idle: number;
}
/** A worker's adapter processes: live ones by adapter id, and the ids shown even at 0. */
export interface AdapterProcesses {
  running: Iterable<[string, number]>;
  known: Iterable<string>;
}

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600];
const STEP_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600];
const LAG_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30];
// The bucket boundaries the OpenTelemetry GenAI conventions recommend.
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const OPERATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const COLLECT_BUDGET_MS = 1500;

/**
 * The process's Prometheus metrics (README "Metrics"): one small API modules call, so no module touches prom-client.
 * Every label is bounded: kinds, statuses and outcomes from code, names from configuration (providers, models,
 * adapters, queues), routes by pattern — never ids, free text or URLs; each metric also caps its label sets (see
 * instruments.ts). Recording is a few map lookups and a number update. Gauges that describe shared state (queues,
 * pending approvals) are read at scrape time, the same from every process; the rest counts what this process did,
 * so a worker's work shows on the worker's side port.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly collectors: Array<() => unknown> = [];

  private readonly http = this.histogram(
    'hecate_http_request_duration_seconds',
    'HTTP request duration by route pattern and status (SSE: until the stream opened)',
    ['method', 'route', 'status'] as const,
    HTTP_BUCKETS,
  );
  private readonly runs = this.counter('hecate_runs_total', 'Runs that reached a terminal status, by execution kind', ['kind', 'status'] as const);
  private readonly runDuration = this.histogram(
    'hecate_run_duration_seconds',
    'Run duration from start (or creation, if it never started) to its terminal status',
    ['kind', 'status'] as const,
    RUN_BUCKETS,
  );
  private readonly stepDuration = this.histogram(
    'hecate_step_duration_seconds',
    'Run step duration by step kind and status',
    ['kind', 'status'] as const,
    STEP_BUCKETS,
  );
  private readonly queueJobs = this.gauge('hecate_queue_jobs', 'Jobs by queue and state (the whole deployment)', ['queue', 'state'] as const);
  private readonly queueOldest = this.gauge(
    'hecate_queue_oldest_waiting_age_seconds',
    'Age of the oldest job ready to run and waiting, per queue (0: none waits)',
    ['queue'] as const,
  );
  private readonly queueCapacity = this.gauge('hecate_queue_capacity', 'Jobs this worker process runs at once, per queue it consumes', ['queue'] as const);
  private readonly reclaims = this.counter('hecate_lease_reclaims_total', 'Leases taken over from a lost worker (run, agent chat turn, adapter session)', [
    'kind',
  ] as const);
  private readonly approvalsPending = this.gauge('hecate_approvals_pending', 'Approvals waiting for a decision (the whole deployment)', ['kind'] as const);
  private readonly approvalWait = this.histogram(
    'hecate_approval_wait_seconds',
    'Time from an approval request to its resolution',
    ['kind', 'outcome'] as const,
    WAIT_BUCKETS,
  );
  private readonly sseConnections = this.gauge('hecate_sse_connections', 'Open SSE streams of this process', ['stream'] as const);
  private readonly sseReplays = this.counter(
    'hecate_sse_replayed_frames_total',
    'SSE frames served from the event store (replay after a cursor, refill after a gap)',
    ['stream'] as const,
  );
  private readonly sseSlow = this.counter('hecate_sse_slow_consumer_disconnects_total', 'SSE clients disconnected for not reading fast enough', [
    'stream',
  ] as const);
  private readonly publishLag = this.histogram('hecate_event_publish_lag_seconds', 'Event commit to its publication on the bus', [] as const, LAG_BUCKETS);
  private readonly liveResumes = this.counter('hecate_live_stream_resumes_total', 'Live stream resumes with a cursor, by how they were served', [
    'outcome',
  ] as const);
  private readonly agentTurns = this.counter('hecate_agent_turns_total', 'Agent chat turns that ended, by runtime and status', ['runtime', 'status'] as const);
  private readonly toolCalls = this.counter('hecate_agent_tool_calls_total', 'Agent loop tool calls by tool (MCP tools as mcp) and outcome', [
    'tool',
    'outcome',
  ] as const);
  private readonly mcpEntries = this.gauge('hecate_mcp_cache_entries', 'MCP client cache entries of this worker, in use or idle', ['state'] as const);
  private readonly adapterProcesses = this.gauge('hecate_adapter_processes', 'External agent adapter processes this worker holds', ['adapter'] as const);
  private readonly gatewayRequests = this.counter(
    'hecate_gateway_requests_total',
    'Model requests by endpoint, routed provider and model, and status',
    ['endpoint', 'provider', 'model', 'status'] as const,
    2000,
  );
  private readonly gatewayCost = this.counter(
    'hecate_gateway_cost_usd_total',
    'Model spend in USD by provider and model',
    ['provider', 'model'] as const,
    1000,
  );
  private readonly budgetRefusals = this.counter('hecate_budget_refusals_total', 'Model calls refused by a spend budget, by budget scope', ['scope'] as const);
  private readonly budgetEvents = this.counter('hecate_budget_threshold_events_total', 'Budget thresholds reached (threshold, exhausted), by budget scope', [
    'scope',
    'kind',
  ] as const);
  private readonly budgets = this.gauge('hecate_budgets', 'Spend budgets by scope, and those whose current window is spent (the whole deployment)', [
    'scope',
    'state',
  ] as const);
  private readonly budgetUse = this.gauge('hecate_budget_utilization_max', "The highest budget's spent / limit in its current window, by scope", [
    'scope',
  ] as const);
  private readonly tokens = this.histogram(
    'gen_ai_client_token_usage',
    'Tokens per model call (gen_ai.client.token.usage)',
    ['gen_ai_token_type', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_operation_name'] as const,
    TOKEN_BUCKETS,
    2000,
  );
  private readonly operation = this.histogram(
    'gen_ai_client_operation_duration_seconds',
    'Duration of each upstream model call attempt (gen_ai.client.operation.duration)',
    ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'error_type'] as const,
    OPERATION_BUCKETS,
    2000,
  );
  private readonly ttft = this.histogram(
    'gen_ai_server_time_to_first_token_seconds',
    'Request received to first streamed chunk from the model (gen_ai.server.time_to_first_token)',
    ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'] as const,
    TTFT_BUCKETS,
    2000,
  );

  constructor(@Inject(RunQueue) private readonly queue: RunQueue) {
    collectDefaultMetrics({ register: this.registry, prefix: 'hecate_' });
    // Counters with a known vocabulary start at 0, so rate() and absent-series alerts work from the first scrape.
    for (const kind of ['run', 'turn', 'adapter'] as const) this.reclaims.of(kind);
    for (const stream of SSE_STREAM_KINDS) {
      this.sseConnections.of(stream);
      this.sseReplays.of(stream);
      this.sseSlow.of(stream);
    }
    for (const outcome of ['buffer', 'fallback', 'reset'] as const) this.liveResumes.of(outcome);
    this.onCollect(() => this.collectQueues());
  }

  private register<F extends { name: string }>(family: F): F {
    this.registry.registerMetric(family as unknown as Metric);
    return family;
  }

  private counter<L extends readonly string[]>(name: string, help: string, labels: L, maxSeries?: number) {
    return this.register(new CounterFamily({ name, help, labels, maxSeries }));
  }

  private gauge<L extends readonly string[]>(name: string, help: string, labels: L) {
    return this.register(new GaugeFamily({ name, help, labels }));
  }

  private histogram<L extends readonly string[]>(name: string, help: string, labels: L, buckets: number[], maxSeries?: number) {
    return this.register(new HistogramFamily({ name, help, labels, buckets, maxSeries }));
  }

  /** Runs `collect` at every scrape (bounded; a failure keeps the gauges it would have set as they were). */
  onCollect(collect: () => unknown): void {
    this.collectors.push(collect);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    await Promise.all(
      this.collectors.map((collect) =>
        within(Promise.resolve().then(collect), COLLECT_BUDGET_MS).catch((err: unknown) =>
          rootLogger().debug({ err: String(err) }, 'metrics collector failed'),
        ),
      ),
    );
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private async collectQueues(): Promise<void> {
    // Queue backend down: readiness reports it; the gauges keep their last values.
    const [counts, oldest] = await Promise.all([this.queue.counts(), this.queue.oldestWaitingMs()]);
    for (const [q, states] of Object.entries(counts)) {
      for (const [state, n] of Object.entries(states)) this.queueJobs.of(q, state).set(n);
    }
    for (const q of QUEUE_NAMES) this.queueOldest.of(q).set((oldest[q] ?? 0) / 1000);
  }

  // ---- HTTP ----------------------------------------------------------------------------------------------------

  /** `route` is the route pattern (`/hecate/v1/tasks/:task_id`), never the URL; `unmatched` when no route matched. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.of(method, route, String(status)).observe(seconds);
  }

  // ---- runs and queues -----------------------------------------------------------------------------------------

  runFinished(kind: string, status: string, seconds: number): void {
    this.runs.of(kind, status).inc();
    this.runDuration.of(kind, status).observe(seconds);
  }

  stepFinished(kind: string, status: string, seconds: number): void {
    this.stepDuration.of(kind, status).observe(seconds);
  }

  leaseReclaimed(kind: LeaseKind, n = 1): void {
    this.reclaims.of(kind).inc(n);
  }

  queueConsumed(queue: string, concurrency: number): void {
    this.queueCapacity.of(queue).set(concurrency);
  }

  // ---- approvals -----------------------------------------------------------------------------------------------

  approvalResolved(kind: ApprovalMetricKind, outcome: ApprovalOutcome, requestedAt: Date, resolvedAt: Date | null): void {
    this.approvalWait.of(kind, outcome).observe(Math.max(0, ((resolvedAt ?? new Date()).getTime() - requestedAt.getTime()) / 1000));
  }

  /** The pending approvals of `kind`, counted at each scrape. */
  countPendingApprovals(kind: ApprovalMetricKind, count: () => Promise<number>): void {
    this.approvalsPending.of(kind);
    this.onCollect(async () => this.approvalsPending.of(kind).set(await count()));
  }

  // ---- streams and events --------------------------------------------------------------------------------------

  sseOpened(stream: SseStreamKind): void {
    this.sseConnections.of(stream).inc();
  }

  sseClosed(stream: SseStreamKind, slowConsumer: boolean): void {
    this.sseConnections.of(stream).dec();
    if (slowConsumer) this.sseSlow.of(stream).inc();
  }

  sseReplayed(stream: SseStreamKind, frames: number): void {
    this.sseReplays.of(stream).inc(frames);
  }

  eventsPublished(lagSeconds: number): void {
    this.publishLag.of().observe(lagSeconds);
  }

  liveStreamResumed(outcome: LiveResumeOutcome): void {
    this.liveResumes.of(outcome).inc();
  }

  // ---- agents --------------------------------------------------------------------------------------------------

  agentTurnEnded(runtime: AgentRuntimeKind, status: string): void {
    this.agentTurns.of(runtime, status).inc();
  }

  /** `tool`: a built-in tool's name, `mcp` for every MCP tool, `unknown` for a name the loop does not know. */
  agentToolCalled(tool: string, outcome: string): void {
    this.toolCalls.of(tool, outcome).inc();
  }

  /** This worker's MCP client cache, read at each scrape. */
  countMcpCache(read: () => McpCacheCounts): void {
    this.onCollect(() => {
      const { inUse, idle } = read();
      this.mcpEntries.of('in_use').set(inUse);
      this.mcpEntries.of('idle').set(idle);
    });
  }

  /** This worker's adapter processes by adapter id, read at each scrape (`known`: ids shown even at 0). */
  countAdapterProcesses(read: () => AdapterProcesses): void {
    this.onCollect(() => {
      const { running, known } = read();
      this.adapterProcesses.reset();
      for (const id of known) this.adapterProcesses.of(id);
      for (const [id, n] of running) this.adapterProcesses.of(id).inc(n);
    });
  }

  // ---- gateway (every model call, recorded once by the inference module) ------------------------------------------

  /**
   * One upstream attempt ended (`errorType` empty on success), with the tokens the provider reported (-1: none).
   * `operation`, `providerName`, `model` are gen_ai.operation.name, gen_ai.provider.name (the preset, else the provider's
   * name) and gen_ai.request.model (the model the call was routed to). Positional, so the hot path allocates nothing.
   */
  modelAttempt(operation: string, providerName: string, model: string, seconds: number, errorType: string, inputTokens = -1, outputTokens = -1): void {
    this.operation.of(operation, providerName, model, errorType).observe(seconds);
    if (inputTokens >= 0) this.tokens.of('input', providerName, model, operation).observe(inputTokens);
    if (outputTokens >= 0) this.tokens.of('output', providerName, model, operation).observe(outputTokens);
  }

  /** A streamed request's first chunk from the model, `seconds` after the request arrived. */
  modelFirstChunk(operation: string, providerName: string, model: string, seconds: number): void {
    this.ttft.of(operation, providerName, model).observe(seconds);
  }

  /** One model request ended: `provider`/`model` empty when it was never routed; `costUsd` what it cost. */
  modelRequest(endpoint: string, provider: string, model: string, status: 'ok' | 'error', costUsd: number): void {
    this.gatewayRequests.of(endpoint, provider || 'none', model || 'none', status).inc();
    // A provider and model that served show up in spend, at 0 for local models.
    if (status === 'ok' && provider) this.gatewayCost.of(provider, model).inc(costUsd);
  }

  // ---- spend budgets ---------------------------------------------------------------------------------------------

  budgetRefused(scope: string): void {
    this.budgetRefusals.of(scope).inc();
  }

  budgetThresholdReached(scope: string, kind: 'threshold' | 'exhausted'): void {
    this.budgetEvents.of(scope, kind).inc();
  }

  /** The deployment's budgets per scope, read at each scrape. */
  countBudgets(read: () => Promise<Array<{ scope: string; budgets: number; exhausted: number; maxRatio: number }>>): void {
    this.onCollect(async () => {
      for (const r of await read()) {
        this.budgets.of(r.scope, 'all').set(r.budgets);
        this.budgets.of(r.scope, 'exhausted').set(r.exhausted);
        this.budgetUse.of(r.scope).set(r.maxRatio);
      }
    });
  }
}
