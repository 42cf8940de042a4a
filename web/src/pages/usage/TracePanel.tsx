import { useEffect, useRef } from 'react';
import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatDuration, formatMicrosUsd, formatTime } from '../../components/format';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

/**
 * One request's trace (`GET /hecate/v1/traces?request_id=`): how it was routed (every candidate and why one was
 * skipped), each upstream attempt, the timings, and its spans as a waterfall.
 */
export function TracePanel({ requestId, onClose }: { requestId: string; onClose: () => void }) {
  const hecate = useHecate();
  const heading = useRef<HTMLHeadingElement>(null);
  const trace = useResource(
    async (signal) => {
      const { data } = await hecate.get('/hecate/v1/traces', { signal, query: { request_id: requestId } });
      if (Array.isArray(data)) throw new Error('the server answered a list for one request id');
      return data;
    },
    [hecate, requestId],
  );
  // The panel opens below the table: move the focus there, so keyboard and screen reader users land on it.
  useEffect(() => heading.current?.focus(), [requestId]);

  const t = trace.data;
  const total = t ? Math.max(t.duration_ms, ...t.spans.map((s) => s.start_ms + s.duration_ms), 1) : 1;
  return (
    <section className="panel trace" aria-labelledby="trace-title">
      <div className="page-head">
        <h2 id="trace-title" ref={heading} tabIndex={-1}>
          Trace of {requestId}
        </h2>
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Close trace
          </button>
        </div>
      </div>
      {trace.error !== undefined && <ErrorNotice error={trace.error} onRetry={trace.reload} />}
      {!t ? (
        trace.loading && <Loading what="the trace" />
      ) : (
        <>
          <p>
            <StatusBadge tone={t.status === 'ok' ? 'ok' : 'error'}>{t.error_type ?? t.status}</StatusBadge> {t.endpoint} ({t.inbound_protocol}
            {t.stream ? ', streamed' : ''}) at {formatTime(t.started_at)} · {formatDuration(t.duration_ms)}
            {t.usage && (
              <>
                {' '}
                · {formatCount(t.usage.input_tokens)} in / {formatCount(t.usage.output_tokens)} out
              </>
            )}
            {t.cost_micros_usd !== undefined && <> · {formatMicrosUsd(t.cost_micros_usd)}</>}
          </p>
          <h3>Route</h3>
          <p>
            Asked for {t.route.requested_model ?? 'any model'}
            {t.route.requested_provider && <> on {t.route.requested_provider}</>}; chose{' '}
            <strong>
              {t.route.selected_provider ?? '—'} / {t.route.selected_model ?? '—'}
            </strong>
            {t.route.reason && <> ({t.route.reason})</>}
            {t.route.failover && <> after failing over from {t.route.fallback_from}</>}.
          </p>
          <table aria-label="Route candidates">
            <thead>
              <tr>
                <th scope="col">Candidate</th>
                <th scope="col">Status</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {t.route.candidates.map((c, i) => (
                <tr key={i}>
                  <th scope="row">
                    {c.provider} / {c.model}
                  </th>
                  <td>{c.status}</td>
                  <td>{c.skip_reason ?? c.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>Attempts</h3>
          <table aria-label="Attempts">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Provider / model</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  First byte
                </th>
                <th scope="col" className="num">
                  Duration
                </th>
              </tr>
            </thead>
            <tbody>
              {t.attempts.map((a) => (
                <tr key={`${a.attempt}-${a.provider}`}>
                  <td>{a.attempt}</td>
                  <td>
                    {a.provider} / {a.model}
                  </td>
                  <td>
                    <StatusBadge tone={a.status === 'ok' ? 'ok' : 'error'}>{a.error_type ?? a.status}</StatusBadge>
                    {a.upstream_status !== undefined && <> HTTP {a.upstream_status}</>}
                    {a.error && <div className="hint">{a.error}</div>}
                  </td>
                  <td className="num">{formatDuration(a.first_byte_ms)}</td>
                  <td className="num">{formatDuration(a.duration_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>Spans</h3>
          <ol className="waterfall" aria-label="Spans">
            {t.spans.map((s, i) => (
              <li key={i}>
                <span className="span-name">{s.name}</span>
                <span className="span-track" aria-hidden="true">
                  <span className="span-bar" ref={(el) => placeBar(el, s.start_ms / total, s.duration_ms / total)} />
                </span>
                <span className="span-time">
                  +{formatDuration(s.start_ms)} · {formatDuration(s.duration_ms)}
                </span>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** Positions a span's bar (through the CSSOM: the page's CSP allows no inline style attribute). */
function placeBar(el: HTMLElement | null, start: number, width: number): void {
  if (!el) return;
  el.style.marginLeft = `${(start * 100).toFixed(2)}%`;
  el.style.width = `${Math.max(width * 100, 0.5).toFixed(2)}%`;
}
