import { useMemo, useState } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { Facts } from '../../components/Facts';
import { formatCount, formatMicrosUsd } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { Page } from '../../components/Page';
import { SelectField } from '../../components/SelectField';
import { useResource } from '../../components/useResource';
import { Budgets } from './Budgets';
import { StackedBars, type Series } from './StackedBars';
import { TracePanel } from './TracePanel';
import { UsageEvents } from './UsageEvents';
import './usage.css';

type Point = Schemas['UsagePoint'];
type Group = Schemas['UsageSeries']['group_by'];
type Bucket = Schemas['UsageSeries']['bucket'];

const RANGES: Array<{ id: string; label: string; bucket: Bucket; count: number }> = [
  { id: '1h', label: 'Last hour, by minute', bucket: 'minute', count: 60 },
  { id: '24h', label: 'Last 24 hours, by hour', bucket: 'hour', count: 24 },
  { id: '7d', label: 'Last 7 days, by hour', bucket: 'hour', count: 168 },
  { id: '30d', label: 'Last 30 days, by day', bucket: 'day', count: 30 },
];
const BUCKET_MS: Record<Bucket, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const GROUPS: Array<{ id: Group; label: string; operatorOnly?: boolean }> = [
  { id: 'provider', label: 'Provider' },
  { id: 'model', label: 'Model' },
  { id: 'api_key', label: 'API key' },
  { id: 'tenant', label: 'Tenant', operatorOnly: true },
];
/** Series beyond these are summed as "other", so a chart stays readable. */
const TOP = 6;

/** The buckets of a window, oldest first, as the server spells them (UTC, second precision). */
function bucketStarts(since: number, until: number, bucket: Bucket): string[] {
  const size = BUCKET_MS[bucket];
  const out: string[] = [];
  for (let t = Math.floor(since / size) * size; t < until; t += size) out.push(new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  return out;
}

function toSeries(points: Point[], buckets: string[], value: (p: Point) => number, label: (key: string | null) => string): Series[] {
  const index = new Map(buckets.map((b, i) => [b, i]));
  const byKey = new Map<string, number[]>();
  for (const p of points) {
    const i = index.get(p.at);
    if (i === undefined) continue;
    const key = p.key ?? '';
    const values = byKey.get(key) ?? buckets.map(() => 0);
    values[i] += value(p);
    byKey.set(key, values);
  }
  const ranked = [...byKey.entries()]
    .map(([key, values]) => ({ key, label: label(key || null), values, total: values.reduce((a, b) => a + b, 0) }))
    .filter((s) => s.total > 0)
    .sort((a, b) => b.total - a.total);
  const top = ranked.slice(0, TOP);
  const rest = ranked.slice(TOP);
  if (rest.length > 0)
    top.push({ key: '\u0000other', label: `${rest.length} others`, values: buckets.map((_, i) => rest.reduce((s, r) => s + r.values[i], 0)), total: 0 });
  return top.map(({ key, label: l, values }) => ({ key, label: l, values }));
}

/** Usage and costs: spend and tokens over time by provider, model, key or tenant; the spend budgets; the usage events; one request's trace. */
export default function UsagePage() {
  const hecate = useHecate();
  const caller = useCaller();
  const [rangeId, setRangeId] = useState('24h');
  const [group, setGroup] = useState<Group>('provider');
  const [traceOf, setTraceOf] = useState<string>();
  const [refreshed, setRefreshed] = useState(0);
  const range = RANGES.find((r) => r.id === rangeId) ?? RANGES[1];

  const span = useMemo(() => {
    const until = Date.now() + 1000;
    return { since: until - range.count * BUCKET_MS[range.bucket], until };
    // A refresh moves the window to now.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [range, refreshed]);
  const query = { since: new Date(span.since).toISOString(), until: new Date(span.until).toISOString() };

  const series = useResource(
    async (signal) => (await hecate.get('/hecate/v1/usage/series', { signal, query: { ...query, bucket: range.bucket, group_by: group } })).data,
    [hecate, span, group],
  );
  const summary = useResource(async (signal) => (await hecate.get('/hecate/v1/usage/summary', { signal, query })).data, [hecate, span]);
  const keys = useResource(async (signal) => (group === 'api_key' ? (await hecate.get('/hecate/v1/api-keys', { signal })).data : []), [hecate, group]);

  const keyName = useMemo(() => new Map((keys.data ?? []).map((k) => [k.id, `${k.name} (${k.prefix})`])), [keys.data]);
  const label = (key: string | null) =>
    key === null ? (group === 'api_key' ? 'operator token' : 'none') : group === 'api_key' ? (keyName.get(key) ?? key) : key;
  const buckets = useMemo(() => bucketStarts(span.since, span.until, range.bucket), [span, range.bucket]);
  const bucketLabel = (at: string) => {
    const d = new Date(at);
    return range.bucket === 'day' ? d.toLocaleDateString() : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  };

  return (
    <Page
      title="Usage and costs"
      actions={
        <button type="button" className="secondary" onClick={() => setRefreshed((n) => n + 1)}>
          Refresh
        </button>
      }
    >
      <div className="panel filters">
        <SelectField label="Period" value={rangeId} onChange={setRangeId} options={RANGES.map((r) => ({ value: r.id, label: r.label }))} />
        <SelectField
          label="Group by"
          value={group}
          onChange={(g) => setGroup(g as Group)}
          options={GROUPS.filter((g) => !g.operatorOnly || caller.kind !== 'api_key').map((g) => ({ value: g.id, label: g.label }))}
        />
      </div>

      <Loaded resource={summary} what="the totals">
        {(totals) => (
          <Facts
            label="Totals"
            facts={[
              ['Spend', formatMicrosUsd(totals.cost_micros_usd)],
              ['Calls', formatCount(totals.calls)],
              ['Errors', formatCount(totals.errors)],
              ['Input tokens', formatCount(totals.input_tokens)],
              ['Output tokens', formatCount(totals.output_tokens)],
            ]}
          />
        )}
      </Loaded>

      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Over time</h2>
        <Loaded resource={series} what="the charts">
          {({ points }) =>
            points.length === 0 ? (
              <p>No model calls in this period.</p>
            ) : (
              <div className="charts">
                <StackedBars
                  title="Spend"
                  buckets={buckets}
                  bucketLabel={bucketLabel}
                  series={toSeries(points, buckets, (p) => p.cost_micros_usd, label)}
                  format={formatMicrosUsd}
                />
                <StackedBars
                  title="Tokens"
                  buckets={buckets}
                  bucketLabel={bucketLabel}
                  series={toSeries(points, buckets, (p) => p.input_tokens + p.output_tokens, label)}
                  format={formatCount}
                />
              </div>
            )
          }
        </Loaded>
      </section>

      <Budgets refreshed={refreshed} />

      <UsageEvents query={query} onTrace={setTraceOf} />
      {traceOf && <TracePanel requestId={traceOf} onClose={() => setTraceOf(undefined)} />}
    </Page>
  );
}
