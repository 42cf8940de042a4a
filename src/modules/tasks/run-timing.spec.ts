import { runTiming } from './run-timing';

describe('runTiming', () => {
  it('splits a run into queue, model, tool, approval wait and overhead, and names the bottleneck', () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const timing = runTiming(
      { queued_at: t(0), created_at: t(0), started_at: t(1), finished_at: t(20) },
      [
        { kind: 'workspace', started_at: t(1), finished_at: t(2) },
        { kind: 'model', started_at: t(2), finished_at: t(6) },
        { kind: 'tool', tool_name: 'shell_exec', started_at: t(6), finished_at: t(7) },
        { kind: 'model', started_at: t(15), finished_at: t(18) },
      ],
      [{ createdAt: new Date(t(7)), resolvedAt: new Date(t(15)) }],
    );
    expect(timing).toEqual({
      total_ms: 20_000,
      queue_ms: 1000,
      model_ms: 7000,
      tool_ms: 1000,
      approval_wait_ms: 8000,
      overhead_ms: 3000,
      turn_count: 2,
      tool_count: 1,
      bottleneck: 'approval_wait',
      bottleneck_ms: 8000,
    });
  });
});
