import { useEffect, useRef } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { formatCount, formatDuration, formatMicrosUsd, formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

type Trace = Schemas['GatewayTrace'];

const CANDIDATE_COLUMNS: Array<Column<Trace['route']['candidates'][number]>> = [
  { header: 'Candidate', rowHeader: true, cell: (c) => `${c.provider} / ${c.model}` },
  { header: 'Status', cell: (c) => c.status },
  { header: 'Why', cell: (c) => c.skip_reason ?? c.reason ?? '' },
];

const ATTEMPT_COLUMNS: Array<Column<Trace['attempts'][number]>> = [
  { header: '#', cell: (a) => a.attempt },
  { header: 'Provider / model', cell: (a) => `${a.provider} / ${a.model}` },
  {
    header: 'Status',
    cell: (a) => (
      <>
        <StatusBadge tone={a.status === 'ok' ? 'ok' : 'error'}>{a.error_type ?? a.status}</StatusBadge>
        {a.upstream_status !== undefined && <> HTTP {a.upstream_status}</>}
        {a.error && <div className="hint">{a.error}</div>}
      </>
    ),
  },
  { header: 'First byte', num: true, cell: (a) => formatDuration(a.first_byte_ms) },
  { header: 'Duration', num: true, cell: (a) => formatDuration(a.duration_ms) },
];

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
      <Loaded resource={trace} what="the trace">
        {(t) => <TraceDetails trace={t} />}
      </Loaded>
    </section>
  );
}

/** What the trace says: the outcome, the route and its candidates, the attempts, the spans. */
function TraceDetails({ trace: t }: { trace: Trace }) {
  // The waterfall's full width: the request, or its last span if one ends later.
  const total = Math.max(t.duration_ms, ...t.spans.map((s) => s.start_ms + s.duration_ms), 1);
  return (
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
      <DataTable caption="Route candidates" columns={CANDIDATE_COLUMNS} rows={t.route.candidates} rowKey={(_, i) => i} />
      <h3>Attempts</h3>
      <DataTable caption="Attempts" columns={ATTEMPT_COLUMNS} rows={t.attempts} rowKey={(a) => `${a.attempt}-${a.provider}`} />
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
  );
}

/** Positions a span's bar (through the CSSOM: the page's CSP allows no inline style attribute). */
function placeBar(el: HTMLElement | null, start: number, width: number): void {
  if (!el) return;
  el.style.marginLeft = `${(start * 100).toFixed(2)}%`;
  el.style.width = `${Math.max(width * 100, 0.5).toFixed(2)}%`;
}
