import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { formatCount, formatDuration, formatMicrosUsd, formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

type UsageEvent = Schemas['UsageEvent'];

const columns = (onTrace: (requestId: string) => void): Array<Column<UsageEvent>> => [
  { header: 'Time', cell: (e) => formatTime(e.created_at) },
  {
    header: 'Request',
    cell: (e) => (
      <>
        <button type="button" className="link" onClick={() => onTrace(e.request_id)} aria-label={`Open the trace of ${e.request_id}`}>
          <code>{e.request_id}</code>
        </button>
        <div className="hint">{e.endpoint}</div>
      </>
    ),
  },
  { header: 'Provider / model', cell: (e) => `${e.provider} / ${e.model}` },
  { header: 'Status', cell: (e) => <StatusBadge tone={e.status === 'ok' ? 'ok' : 'error'}>{e.error_type ?? e.status}</StatusBadge> },
  { header: 'Tokens in / out', num: true, cell: (e) => `${formatCount(e.input_tokens)} / ${formatCount(e.output_tokens)}` },
  { header: 'Cost', num: true, cell: (e) => formatMicrosUsd(e.cost_micros_usd) },
  { header: 'Latency', num: true, cell: (e) => formatDuration(e.latency_ms) },
];

/** The latest upstream calls of the period (the usage ledger), each with a way to open its request's trace. */
export function UsageEvents({ query, onTrace }: { query: { since: string; until: string }; onTrace: (requestId: string) => void }) {
  const hecate = useHecate();
  const events = useResource(
    async (signal) => (await hecate.get('/hecate/v1/usage/events', { signal, query: { ...query, limit: 50 } })).data,
    [hecate, query.since, query.until],
  );
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Usage events</h2>
      <Loaded resource={events} what="the usage events">
        {(list) => (
          <DataTable caption="Usage events" columns={columns(onTrace)} rows={list} rowKey={(e) => e.id} empty={<p>No usage events in this period.</p>} />
        )}
      </Loaded>
    </section>
  );
}
