/** Where a run's time went (docs/api.md §4 `timing` of task-backed Agent Chat messages). */
export interface RunTiming {
  total_ms: number;
  queue_ms: number;
  model_ms: number;
  tool_ms: number;
  approval_wait_ms: number;
  overhead_ms: number;
  turn_count: number;
  tool_count: number;
  bottleneck: 'queue' | 'model' | 'tool' | 'approval_wait' | 'overhead';
  bottleneck_ms: number;
}

const ms = (from: string | Date | null | undefined, to: string | Date | null | undefined): number =>
  from && to ? Math.max(0, new Date(to).getTime() - new Date(from).getTime()) : 0;

/**
 * The buckets from the run's steps and approvals: model steps are model time, other tool steps tool time (the
 * workspace step is overhead), approvals from request to resolution; overhead is the remainder of the run's wall clock
 * (orchestration, checkpoints, polling) — named as such, not passed off as any one step.
 */
export function runTiming(
  run: { queued_at?: string | Date | null; created_at: string | Date; started_at?: string | Date | null; finished_at?: string | Date | null },
  steps: Array<{ kind: string; tool_name?: string | null; started_at?: string | Date | null; finished_at?: string | Date | null }>,
  approvals: Array<{ createdAt: Date; resolvedAt: Date | null }>,
  now = new Date(),
): RunTiming {
  // From the run's creation: `queued_at` / `started_at` move when a run is requeued (an approval, a takeover); the first
  // step's start is when a worker first picked it up.
  const firstStart = steps.map((s) => s.started_at).find(Boolean) ?? run.started_at ?? run.finished_at ?? now;
  const total = ms(run.created_at, run.finished_at ?? now);
  const queue = ms(run.created_at, firstStart);
  let model = 0;
  let tool = 0;
  let turns = 0;
  let tools = 0;
  for (const s of steps) {
    const d = ms(s.started_at, s.finished_at);
    if (s.kind === 'model') {
      model += d;
      turns += 1;
    } else if (s.kind !== 'workspace') {
      tool += d;
      tools += 1;
    }
  }
  const approval = approvals.reduce((n, a) => n + ms(a.createdAt, a.resolvedAt ?? run.finished_at ?? now), 0);
  const overhead = Math.max(0, total - queue - model - tool - approval);
  const buckets = { queue, model, tool, approval_wait: approval, overhead } as const;
  const [bottleneck, bottleneckMs] = (Object.entries(buckets) as Array<[RunTiming['bottleneck'], number]>).reduce((a, b) => (b[1] > a[1] ? b : a));
  return {
    total_ms: total,
    queue_ms: queue,
    model_ms: model,
    tool_ms: tool,
    approval_wait_ms: approval,
    overhead_ms: overhead,
    turn_count: turns,
    tool_count: tools,
    bottleneck,
    bottleneck_ms: bottleneckMs,
  };
}
