import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatDuration, formatMicrosUsd, formatTime } from '../../components/format';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

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
      {events.error !== undefined && <ErrorNotice error={events.error} onRetry={events.reload} />}
      {events.data === undefined ? (
        events.loading && <Loading what="the usage events" />
      ) : events.data.length === 0 ? (
        <p>No usage events in this period.</p>
      ) : (
        <table aria-label="Usage events">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Request</th>
              <th scope="col">Provider / model</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">
                Tokens in / out
              </th>
              <th scope="col" className="num">
                Cost
              </th>
              <th scope="col" className="num">
                Latency
              </th>
            </tr>
          </thead>
          <tbody>
            {events.data.map((e) => (
              <tr key={e.id}>
                <td>{formatTime(e.created_at)}</td>
                <td>
                  <button type="button" className="link" onClick={() => onTrace(e.request_id)} aria-label={`Open the trace of ${e.request_id}`}>
                    <code>{e.request_id}</code>
                  </button>
                  <div className="hint">{e.endpoint}</div>
                </td>
                <td>
                  {e.provider} / {e.model}
                </td>
                <td>
                  <StatusBadge tone={e.status === 'ok' ? 'ok' : 'error'}>{e.error_type ?? e.status}</StatusBadge>
                </td>
                <td className="num">
                  {formatCount(e.input_tokens)} / {formatCount(e.output_tokens)}
                </td>
                <td className="num">{formatMicrosUsd(e.cost_micros_usd)}</td>
                <td className="num">{formatDuration(e.latency_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
