import { useState } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatDuration } from '../../components/format';
import { Loading } from '../../components/Loading';
import { StatusBadge, type Tone } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

type Adapter = Schemas['AgentAdapter'];
type Health = Schemas['AgentAdapterHealth'];

const HEALTH_TONE: Record<Health['status'], Tone> = { ready: 'ok', not_installed: 'idle', auth_required: 'warn', error: 'error' };
const AUTH_TONE: Record<NonNullable<Adapter['auth_status']>, Tone> = { ok: 'ok', unauthenticated: 'warn', billing: 'warn', unknown: 'idle' };

/** One adapter: what the catalog knows without running it; `admin` may probe it end to end (spawn, initialize, new session). */
function AdapterRow({ adapter }: { adapter: Adapter }) {
  const hecate = useHecate();
  const caller = useCaller();
  const [health, setHealth] = useState<Health>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const probe = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setHealth((await hecate.post('/hecate/v1/agent-adapters/{id}/probe', { path: { id: adapter.id } })).data.health);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <tr>
      <th scope="row">
        {adapter.name}
        <div className="hint">
          <code>{adapter.id}</code>
        </div>
      </th>
      <td>
        <StatusBadge tone={adapter.available ? 'ok' : 'idle'}>{adapter.status}</StatusBadge>
        {adapter.path && (
          <div className="hint">
            <code>{adapter.path}</code>
          </div>
        )}
        {adapter.error && <div className="hint">{adapter.error}</div>}
      </td>
      <td>
        {adapter.version ?? '—'}
        {adapter.version_outside_range && (
          <div>
            <StatusBadge tone="warn">outside tested range</StatusBadge> <span className="hint">tested {adapter.supported_range}</span>
          </div>
        )}
      </td>
      <td>{adapter.auth_status ? <StatusBadge tone={AUTH_TONE[adapter.auth_status]}>{adapter.auth_status}</StatusBadge> : '—'}</td>
      <td>{adapter.managed ? `managed (${adapter.managed_package ?? 'npm'})` : 'on PATH'}</td>
      <td>
        {caller.can('admin') && (
          <button type="button" className="secondary" onClick={() => void probe()} disabled={busy} aria-label={`Probe ${adapter.name}`}>
            {busy ? 'Probing…' : 'Probe'}
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
        {error !== undefined && <ErrorNotice error={error} title="The probe failed" />}
      </td>
    </tr>
  );
}

/** External agent adapters (Codex, Claude Code, …) and their probes (docs/api.md §4.7). */
export function Adapters() {
  const hecate = useHecate();
  const adapters = useResource(async (signal) => (await hecate.get('/hecate/v1/agent-adapters', { signal })).data, [hecate]);
  return (
    <section aria-labelledby="adapters-title">
      <h2 id="adapters-title">Agent adapters</h2>
      {adapters.error !== undefined && <ErrorNotice error={adapters.error} onRetry={adapters.reload} />}
      {adapters.data === undefined ? (
        adapters.loading && <Loading what="the adapters" />
      ) : (
        <table aria-label="Agent adapters">
          <thead>
            <tr>
              <th scope="col">Adapter</th>
              <th scope="col">Installed</th>
              <th scope="col">Version</th>
              <th scope="col">Sign-in</th>
              <th scope="col">Launcher</th>
              <th scope="col">Probe</th>
            </tr>
          </thead>
          <tbody>
            {adapters.data.map((a) => (
              <AdapterRow key={a.id} adapter={a} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
