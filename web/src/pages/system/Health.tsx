import { useState } from 'react';
import { HecateError, type Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Facts } from '../../components/Facts';
import { formatCount, formatDuration, formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { StatusBadge } from '../../components/StatusBadge';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';

/** How often the live parts (readiness, queues, workers, MCP cache) are read again. */
const REFRESH_MS = 5_000;

type QueueProbe = Schemas['QueueProbe'];
type SystemStats = Schemas['SystemStats'];
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
  return (
    <Loaded resource={health} what="health">
      {({ live, ready }) => <ReadinessFacts live={live} ready={ready} />}
    </Loaded>
  );
}

type Readiness = { live: { status: string; time: string; version: string }; ready: { ok: boolean; body?: ReadyBody; message?: string } };

function ReadinessFacts({ live, ready }: Readiness) {
  const details = Object.entries(ready.body?.details ?? {});
  return (
    <div className="panel">
      <p>
        Live <StatusBadge tone={live.status === 'ok' ? 'ok' : 'error'}>{live.status}</StatusBadge> · version <code>{live.version}</code> · checked{' '}
        {formatTime(live.time)}
      </p>
      <p>
        Ready <StatusBadge tone={ready.ok ? 'ok' : 'error'}>{ready.ok ? 'ready' : 'not ready'}</StatusBadge>
        {ready.message && <span className="hint"> {ready.message}</span>}
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
  return (
    <Loaded resource={stats} what="the queues">
      {(s) => <QueueFacts stats={s} />}
    </Loaded>
  );
}

function QueueFacts({ stats: s }: { stats: SystemStats }) {
  const queues = [...new Set([...Object.keys(s.queue_counts), ...Object.keys(s.queue_capacity)])].sort();
  const columns: Array<Column<string>> = [
    { header: 'Queue', rowHeader: true, cell: (q) => q },
    ...QUEUE_STATES.map((state) => ({ header: state, num: true, cell: (q: string) => formatCount(s.queue_counts[q]?.[state] ?? 0) })),
    { header: 'capacity', num: true, cell: (q) => formatCount(s.queue_capacity[q] ?? 0) },
  ];
  return (
    <>
      <Facts
        facts={[
          ['Live workers', s.workers],
          ['Queue backend', s.queue_backend === 'bullmq' ? 'BullMQ (Redis)' : 'in-process'],
          ['Queued jobs', formatCount(s.queue_depth)],
          ['Storage', s.storage_backend === 'postgres' ? 'Postgres' : 'PGlite (embedded)'],
          ['Uptime', formatDuration(s.uptime_s * 1000)],
        ]}
      />
      <DataTable caption="Queues" columns={columns} rows={queues} rowKey={(q) => q} />
    </>
  );
}

/** An end-to-end check (api → queue → worker → Postgres), polled until a worker finished it. */
function QueueProbeButton() {
  const hecate = useHecate();
  const [probe, setProbe] = useState<QueueProbe>();
  const action = useAction();
  const run = () =>
    action.run(async () => {
      let current = (await hecate.post('/hecate/v1/system/queue-probes', { body: {} })).data;
      setProbe(current);
      for (let i = 0; i < 60 && (current.status === 'queued' || current.status === 'running'); i++) {
        await new Promise((r) => setTimeout(r, 500));
        current = (await hecate.get('/hecate/v1/system/queue-probes/{probe_id}', { path: { probe_id: current.id } })).data;
        setProbe(current);
      }
    });
  const tone = probe?.status === 'completed' ? 'ok' : 'warn';
  return (
    <div className="panel">
      <div className="actions">
        <button type="button" onClick={() => void run()} disabled={action.busy}>
          {action.busy ? 'Probing…' : 'Probe the queue'}
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
      <ErrorNotice error={action.error} title="The probe failed" />
    </div>
  );
}

function McpCache() {
  const hecate = useHecate();
  const cache = useResource(async (signal) => (await hecate.get('/hecate/v1/system/mcp/cache', { signal })).data, [hecate], { refreshMs: REFRESH_MS });
  return (
    <Loaded resource={cache} what="the MCP cache">
      {(c) => (
        <Facts
          facts={[
            ['Client cache', c.configured ? 'on' : 'off'],
            ['Servers cached', c.entries],
            ['In use', c.in_use],
            ['Idle', c.idle],
            ['Workers reporting', c.workers],
          ]}
        />
      )}
    </Loaded>
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
