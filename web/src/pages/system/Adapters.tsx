import { useState } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatDuration } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { StatusBadge, type Tone } from '../../components/StatusBadge';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';

type Adapter = Schemas['AgentAdapter'];
type Health = Schemas['AgentAdapterHealth'];

const HEALTH_TONE: Record<Health['status'], Tone> = { ready: 'ok', not_installed: 'idle', auth_required: 'warn', error: 'error' };
const AUTH_TONE: Record<NonNullable<Adapter['auth_status']>, Tone> = { ok: 'ok', unauthenticated: 'warn', billing: 'warn', unknown: 'idle' };

/** `admin` probes an adapter end to end (spawn, initialize, new session); the result shows in its row. */
function ProbeCell({ adapter }: { adapter: Adapter }) {
  const hecate = useHecate();
  const caller = useCaller();
  const [health, setHealth] = useState<Health>();
  const probe = useAction();
  const run = () =>
    probe.run(async () => setHealth((await hecate.post('/hecate/v1/agent-adapters/{adapter_id}/probe', { path: { adapter_id: adapter.id } })).data.health));
  return (
    <>
      {caller.can('admin') && (
        <button type="button" className="secondary" onClick={() => void run()} disabled={probe.busy} aria-label={`Probe ${adapter.name}`}>
          {probe.busy ? 'Probing…' : 'Probe'}
        </button>
      )}
      <div role="status">
        {health && (
          <p>
            <StatusBadge tone={HEALTH_TONE[health.status]}>{health.status}</StatusBadge> at {health.stage} in {formatDuration(health.duration_ms)}
            {health.hint && <span className="hint"> {health.hint}</span>}
            {health.error && <span className="hint"> {health.error}</span>}
          </p>
        )}
      </div>
      <ErrorNotice error={probe.error} title="The probe failed" />
    </>
  );
}

/** The adapters table, a row each: what the catalog knows without running it, and its probe. */
const COLUMNS: Array<Column<Adapter>> = [
  {
    header: 'Adapter',
    rowHeader: true,
    cell: (a) => (
      <>
        {a.name}
        <div className="hint">
          <code>{a.id}</code>
        </div>
      </>
    ),
  },
  {
    header: 'Installed',
    cell: (a) => (
      <>
        <StatusBadge tone={a.available ? 'ok' : 'idle'}>{a.status}</StatusBadge>
        {a.path && (
          <div className="hint">
            <code>{a.path}</code>
          </div>
        )}
        {a.error && <div className="hint">{a.error}</div>}
      </>
    ),
  },
  {
    header: 'Version',
    cell: (a) => (
      <>
        {a.version ?? '—'}
        {a.version_outside_range && (
          <div>
            <StatusBadge tone="warn">outside tested range</StatusBadge> <span className="hint">tested {a.supported_range}</span>
          </div>
        )}
      </>
    ),
  },
  { header: 'Sign-in', cell: (a) => (a.auth_status ? <StatusBadge tone={AUTH_TONE[a.auth_status]}>{a.auth_status}</StatusBadge> : '—') },
  { header: 'Launcher', cell: (a) => (a.managed ? `managed (${a.managed_package ?? 'npm'})` : 'on PATH') },
  { header: 'Probe', cell: (a) => <ProbeCell adapter={a} /> },
];

/** External agent adapters (Codex, Claude Code, …) and their probes (docs/api.md §4.7). */
export function Adapters() {
  const hecate = useHecate();
  const adapters = useResource(async (signal) => (await hecate.get('/hecate/v1/agent-adapters', { signal })).data, [hecate]);
  return (
    <section aria-labelledby="adapters-title">
      <h2 id="adapters-title">Agent adapters</h2>
      <Loaded resource={adapters} what="the adapters">
        {(list) => <DataTable caption="Agent adapters" columns={COLUMNS} rows={list} rowKey={(a) => a.id} />}
      </Loaded>
    </section>
  );
}
