import { useState } from 'react';
import { HecateError, type Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatDuration, formatTime } from '../../components/format';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

/** How often the live parts (readiness, queues, workers, MCP cache) are read again. */
const REFRESH_MS = 5_000;

type QueueProbe = Schemas['QueueProbe'];
type ReadyBody = { status?: string; details?: Record<string, { status?: string; message?: string }> };

function Readiness() {
  const hecate = useHecate();
  const health = useResource(
    async (signal) => {
      const live = await hecate.get('/healthz', { signal });
      // 503 answers the readiness result too (not an error envelope): a dependency is down.
      const ready = await hecate.request('get', '/readyz', { signal, retry: false }).then(
        (r) => ({ ok: true, body: r.data as ReadyBody }),
        (err: unknown) => {
          if (err instanceof HecateError && err.status === 503) return { ok: false, body: undefined, message: err.message };
          throw err;
        },
      );
      return { live, ready };
    },
    [hecate],
    { refreshMs: REFRESH_MS },
  );
  if (health.data === undefined) return health.error !== undefined ? <ErrorNotice error={health.error} onRetry={health.reload} /> : <Loading what="health" />;
  const { live, ready } = health.data;
  const details = Object.entries(ready.body?.details ?? {});
  return (
    <div className="panel">
      <p>
        Live <StatusBadge tone={live.status === 'ok' ? 'ok' : 'error'}>{live.status}</StatusBadge> · version <code>{live.version}</code> · checked{' '}
        {formatTime(live.time)}
      </p>
      <p>
        Ready <StatusBadge tone={ready.ok ? 'ok' : 'error'}>{ready.ok ? 'ready' : 'not ready'}</StatusBadge>
        {'message' in ready && ready.message && <span className="hint"> {ready.message}</span>}
      </p>
      {details.length > 0 && (
        <ul className="inline-list" aria-label="Dependencies">
          {details.map(([name, d]) => (
            <li key={name}>
              {name} <StatusBadge tone={d.status === 'up' ? 'ok' : 'error'}>{d.status ?? 'unknown'}</StatusBadge>
              {d.message && <span className="hint"> {d.message}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

function QueuesAndWorkers() {
  const hecate = useHecate();
  const stats = useResource(async (signal) => (await hecate.get('/hecate/v1/system/stats', { signal })).data, [hecate], { refreshMs: REFRESH_MS });
  if (stats.data === undefined) return stats.error !== undefined ? <ErrorNotice error={stats.error} onRetry={stats.reload} /> : <Loading what="the queues" />;
  const s = stats.data;
  const queues = [...new Set([...Object.keys(s.queue_counts), ...Object.keys(s.queue_capacity)])].sort();
  return (
    <>
      <dl className="facts">
        <div>
          <dt>Live workers</dt>
          <dd>{s.workers}</dd>
        </div>
        <div>
          <dt>Queue backend</dt>
          <dd>{s.queue_backend === 'bullmq' ? 'BullMQ (Redis)' : 'in-process'}</dd>
        </div>
        <div>
          <dt>Queued jobs</dt>
          <dd>{formatCount(s.queue_depth)}</dd>
        </div>
        <div>
          <dt>Storage</dt>
          <dd>{s.storage_backend === 'postgres' ? 'Postgres' : 'PGlite (embedded)'}</dd>
        </div>
        <div>
          <dt>Uptime</dt>
          <dd>{formatDuration(s.uptime_s * 1000)}</dd>
        </div>
      </dl>
      {stats.error !== undefined && <ErrorNotice error={stats.error} title="The last refresh failed" />}
      <table aria-label="Queues">
        <thead>
          <tr>
            <th scope="col">Queue</th>
            {QUEUE_STATES.map((state) => (
              <th key={state} scope="col" className="num">
                {state}
              </th>
            ))}
            <th scope="col" className="num">
              capacity
            </th>
          </tr>
        </thead>
        <tbody>
          {queues.map((q) => (
            <tr key={q}>
              <th scope="row">{q}</th>
              {QUEUE_STATES.map((state) => (
                <td key={state} className="num">
                  {formatCount(s.queue_counts[q]?.[state] ?? 0)}
                </td>
              ))}
              <td className="num">{formatCount(s.queue_capacity[q] ?? 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** An end-to-end check (api → queue → worker → Postgres), polled until a worker finished it. */
function QueueProbeButton() {
  const hecate = useHecate();
  const [probe, setProbe] = useState<QueueProbe>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      let current = (await hecate.post('/hecate/v1/system/queue-probes', { body: {} })).data;
      setProbe(current);
      for (let i = 0; i < 60 && (current.status === 'queued' || current.status === 'running'); i++) {
        await new Promise((r) => setTimeout(r, 500));
        current = (await hecate.get('/hecate/v1/system/queue-probes/{id}', { path: { id: current.id } })).data;
        setProbe(current);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const tone = probe?.status === 'completed' ? 'ok' : 'warn';
  return (
    <div className="panel">
      <div className="actions">
        <button type="button" onClick={() => void run()} disabled={busy}>
          {busy ? 'Probing…' : 'Probe the queue'}
        </button>
      </div>
      <div role="status">
        {probe && (
          <p>
            Queue probe <StatusBadge tone={tone}>{probe.status}</StatusBadge>
            {probe.worker && <> on worker {probe.worker}</>}
            {probe.completed_at && probe.started_at && <> in {formatDuration(Date.parse(probe.completed_at) - Date.parse(probe.created_at))}</>}
          </p>
        )}
      </div>
      {error !== undefined && <ErrorNotice error={error} title="The probe failed" />}
    </div>
  );
}

function McpCache() {
  const hecate = useHecate();
  const cache = useResource(async (signal) => (await hecate.get('/hecate/v1/system/mcp/cache', { signal })).data, [hecate], { refreshMs: REFRESH_MS });
  if (cache.data === undefined)
    return cache.error !== undefined ? <ErrorNotice error={cache.error} onRetry={cache.reload} /> : <Loading what="the MCP cache" />;
  const c = cache.data;
  return (
    <dl className="facts">
      <div>
        <dt>Client cache</dt>
        <dd>{c.configured ? 'on' : 'off'}</dd>
      </div>
      <div>
        <dt>Servers cached</dt>
        <dd>{c.entries}</dd>
      </div>
      <div>
        <dt>In use</dt>
        <dd>{c.in_use}</dd>
      </div>
      <div>
        <dt>Idle</dt>
        <dd>{c.idle}</dd>
      </div>
      <div>
        <dt>Workers reporting</dt>
        <dd>{c.workers}</dd>
      </div>
    </dl>
  );
}

/** Health, the queues and live workers, the MCP client cache; the queue probe for `admin`. */
export function Health() {
  const caller = useCaller();
  return (
    <>
      <section aria-labelledby="health-title">
        <h2 id="health-title">Health</h2>
        <Readiness />
      </section>
      <section aria-labelledby="queues-title">
        <h2 id="queues-title">Queues and workers</h2>
        <QueuesAndWorkers />
        {caller.can('admin') && <QueueProbeButton />}
      </section>
      <section aria-labelledby="mcp-title">
        <h2 id="mcp-title">MCP client cache</h2>
        <McpCache />
      </section>
    </>
  );
}
