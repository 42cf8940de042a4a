import { type Metric, Registry } from 'prom-client';
import { CounterFamily, GaugeFamily, HistogramFamily, OVERFLOW_LABEL } from './instruments';

/** The exposition text prom-client renders for these families (what /metrics serves). */
async function render(...families: Array<{ name: string }>): Promise<string> {
  const registry = new Registry();
  for (const f of families) registry.registerMetric(f as unknown as Metric);
  return registry.metrics();
}

describe('metric instruments (core/metrics)', () => {
  it('counts per label set and renders Prometheus text with HELP and TYPE', async () => {
    const c = new CounterFamily({ name: 'x_total', help: 'Things', labels: ['kind', 'status'] as const });
    c.of('shell', 'completed').inc();
    c.of('shell', 'completed').inc(2);
    c.of('agent_loop', 'failed').inc();
    c.of('shell', 'failed').inc(0.5);
    const text = await render(c);
    expect(text).toContain('# HELP x_total Things\n# TYPE x_total counter\n');
    expect(text).toContain('x_total{kind="shell",status="completed"} 3\n');
    expect(text).toContain('x_total{kind="agent_loop",status="failed"} 1\n');
    expect(text).toContain('x_total{kind="shell",status="failed"} 0.5\n');
  });

  it('finds a series again without creating another (the cached child), and a counter never goes down', () => {
    const c = new CounterFamily({ name: 'y_total', help: 'h', labels: ['a', 'b', 'c', 'd'] as const });
    const first = c.of('1', '2', '3', '4');
    expect(c.of('1', '2', '3', '4')).toBe(first);
    expect(c.of('1', '2', '3', '5')).not.toBe(first);
    first.inc(-5);
    expect(first.value).toBe(0);
  });

  it('a metric without labels has one series', async () => {
    const h = new HistogramFamily({ name: 'lag_seconds', help: 'h', labels: [] as const, buckets: [0.1, 1] });
    expect(h.of()).toBe(h.of());
    h.of().observe(0.05);
    expect(await render(h)).toContain('lag_seconds_count 1\n');
  });

  it('renders histograms as cumulative buckets with +Inf, _sum and _count; non-finite values are ignored', async () => {
    const h = new HistogramFamily({ name: 'd_seconds', help: 'Durations', labels: ['route'] as const, buckets: [1, 0.1, 10] });
    const s = h.of('/a');
    for (const v of [0.05, 0.1, 0.5, 5, 50, Number.NaN, Number.POSITIVE_INFINITY]) s.observe(v);
    const text = await render(h);
    expect(text).toContain('# TYPE d_seconds histogram\n');
    expect(text).toContain('d_seconds_bucket{route="/a",le="0.1"} 2\n');
    expect(text).toContain('d_seconds_bucket{route="/a",le="1"} 3\n');
    expect(text).toContain('d_seconds_bucket{route="/a",le="10"} 4\n');
    expect(text).toContain('d_seconds_bucket{route="/a",le="+Inf"} 5\n');
    expect(text).toContain('d_seconds_sum{route="/a"} 55.65\n');
    expect(text).toContain('d_seconds_count{route="/a"} 5\n');
  });

  it('caps the label sets of a metric: past maxSeries, new sets are counted under _other', async () => {
    const c = new CounterFamily({ name: 'm_total', help: 'h', labels: ['model', 'provider'] as const, maxSeries: 3 });
    for (let i = 0; i < 10; i++) c.of(`model-${i}`, 'p').inc();
    c.of('model-0', 'p').inc();
    const text = await render(c);
    expect(text).toContain('m_total{model="model-0",provider="p"} 2\n');
    expect(text).toContain('m_total{model="model-1",provider="p"} 1\n');
    expect(text).toContain('m_total{model="model-2",provider="p"} 1\n');
    expect(text).toContain(`m_total{model="${OVERFLOW_LABEL}",provider="${OVERFLOW_LABEL}"} 7\n`);
    expect(text.match(/^m_total\{/gm)).toHaveLength(4);
  });

  it('escapes label values and keeps them as given (no interpolation into the name)', async () => {
    const c = new CounterFamily({ name: 'e_total', help: 'h', labels: ['v'] as const });
    c.of('a"b\\c\nd').inc();
    expect(await render(c)).toContain('e_total{v="a\\"b\\\\c\\nd"} 1\n');
  });

  it('gauges set, move and reset (scrape-time gauges replace their series)', async () => {
    const g = new GaugeFamily({ name: 'g', help: 'h', labels: ['adapter'] as const });
    g.of('codex').set(3);
    g.of('codex').dec();
    g.of('claude').inc();
    expect(await render(g)).toContain('g{adapter="codex"} 2\n');
    g.reset();
    g.of('claude').set(1);
    const text = await render(g);
    expect(text).not.toContain('codex');
    expect(text).toContain('g{adapter="claude"} 1\n');
  });

  it('renders a metric with no series as HELP and TYPE only', async () => {
    const text = await render(new GaugeFamily({ name: 'empty', help: 'nothing yet', labels: ['q'] as const }));
    expect(text).toBe('# HELP empty nothing yet\n# TYPE empty gauge\n');
  });
});
