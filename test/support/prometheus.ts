/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed `/metrics` answer: the declared types by metric name, and every sample. */
export class Exposition {
  readonly types = new Map<string, string>();
  readonly samples: Sample[] = [];

  constructor(readonly text: string) {
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) this.types.set(type[1], type[2]);
      if (!line || line.startsWith('#')) continue;
      const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const l of (m[2] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, '$1');
      this.samples.push({ name: m[1], labels, value: Number(m[3]) });
    }
  }

  /** Samples of `name` whose labels include `labels`. */
  series(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** The sum of the matching samples (0 when none). */
  sum(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((n, s) => n + s.value, 0);
  }

  /** Whether any sample of `name` exists (a declared metric with no series is not exposed). */
  has(name: string): boolean {
    return this.samples.some((s) => s.name === name);
  }

  /** The metric a sample name belongs to: `x_bucket`, `x_sum`, `x_count` of a histogram `x` → `x`. */
  familyOf(name: string): string {
    const m = /^(.*)_(bucket|sum|count)$/.exec(name);
    return m && this.types.get(m[1]) === 'histogram' ? m[1] : name;
  }
}

export async function scrape(baseUrl: string): Promise<Exposition> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/metrics → ${res.status}`);
  return new Exposition(await res.text());
}
