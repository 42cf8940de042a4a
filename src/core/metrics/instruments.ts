/** The values of a metric's labels, in the order of its label names. */
export type LabelValues<L extends readonly string[]> = { [K in keyof L]: string };

/** The label value every label of a series gets once a metric has `maxSeries` label sets. */
export const OVERFLOW_LABEL = '_other';

export interface FamilyOptions<L extends readonly string[]> {
  name: string;
  help: string;
  labels: L;
  /** Distinct label sets kept; further ones are counted together under `_other` (a guard, not a vocabulary). */
  maxSeries?: number;
}

type Node = Map<string, unknown>;

/** One sample line of the exposition: `metricName{labels} value`. */
export interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What a prom-client Registry asks every registered metric for (`get()`), in its untyped runtime shape. */
export interface RenderedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum';
  values: Sample[];
}

/**
 * The series of one metric, cached by their label values in nested maps: once a series exists, finding it again
 * allocates nothing, so recording on a hot path costs a few map lookups and a number update. A prom-client Registry
 * renders it (it has the `get()` the registry asks every metric for).
 */
abstract class Family<L extends readonly string[], S> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: RenderedMetric['type'];
  readonly aggregator = 'sum' as const;
  private readonly labelNames: L;
  private readonly maxSeries: number;
  private root: Node = new Map();
  protected series: Array<{ labels: Record<string, string>; s: S }> = [];
  private overflow: S | undefined;

  constructor(options: FamilyOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labels;
    this.maxSeries = options.maxSeries ?? 500;
  }

  protected abstract create(): S;

  /** The series of these label values (created on first use). */
  of(...values: LabelValues<L>): S {
    const n = this.labelNames.length;
    let node = this.root;
    for (let i = 0; i < n - 1; i++) {
      const next = node.get(values[i]) as Node | undefined;
      if (!next) return this.add(values);
      node = next;
    }
    return (node.get(n === 0 ? '' : values[n - 1]) as S | undefined) ?? this.add(values);
  }

  private add(values: readonly string[]): S {
    if (this.series.length >= this.maxSeries) {
      this.overflow ??= this.insert(this.labelNames.map(() => OVERFLOW_LABEL));
      return this.overflow;
    }
    return this.insert(values);
  }

  private insert(values: readonly string[]): S {
    const n = this.labelNames.length;
    let node = this.root;
    for (let i = 0; i < n - 1; i++) {
      let next = node.get(values[i]) as Node | undefined;
      if (!next) node.set(values[i], (next = new Map()));
      node = next;
    }
    const key = n === 0 ? '' : values[n - 1];
    const existing = node.get(key) as S | undefined;
    if (existing) return existing;
    const s = this.create();
    node.set(key, s);
    this.series.push({ labels: Object.fromEntries(this.labelNames.map((name, i) => [name, String(values[i])])), s });
    return s;
  }

  /** Forgets every series (scrape-time gauges replace theirs each time). */
  reset(): void {
    this.root = new Map();
    this.series = [];
    this.overflow = undefined;
  }

  protected abstract samples(): Sample[];

  /** prom-client's metric interface: what a Registry renders. */
  get(): RenderedMetric {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() };
  }
}

export class CounterSeries {
  value = 0;
  inc(n = 1): void {
    if (n > 0) this.value += n;
  }
}

export class GaugeSeries {
  value = 0;
  set(v: number): void {
    this.value = v;
  }
  inc(n = 1): void {
    this.value += n;
  }
  dec(n = 1): void {
    this.value -= n;
  }
}

export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    if (!Number.isFinite(v)) return;
    this.sum += v;
    this.count += 1;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]) {
        this.counts[i] += 1;
        return;
      }
    }
  }
}

/** A counter or a gauge: one sample per series. */
abstract class ScalarFamily<L extends readonly string[], S extends { value: number }> extends Family<L, S> {
  protected samples(): Sample[] {
    return this.series.map(({ labels, s }) => ({ labels, value: s.value }));
  }
}

export class CounterFamily<L extends readonly string[]> extends ScalarFamily<L, CounterSeries> {
  readonly type = 'counter' as const;
  protected create(): CounterSeries {
    return new CounterSeries();
  }
}

export class GaugeFamily<L extends readonly string[]> extends ScalarFamily<L, GaugeSeries> {
  readonly type = 'gauge' as const;
  protected create(): GaugeSeries {
    return new GaugeSeries();
  }
}

export class HistogramFamily<L extends readonly string[]> extends Family<L, HistogramSeries> {
  readonly type = 'histogram' as const;
  private readonly bounds: readonly number[];
  constructor(options: FamilyOptions<L> & { buckets: readonly number[] }) {
    super(options);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }
  protected create(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }
  protected samples(): Sample[] {
    const values: Sample[] = [];
    for (const { labels, s } of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: this.bounds[i] }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: s.count });
    }
    return values;
  }
}
