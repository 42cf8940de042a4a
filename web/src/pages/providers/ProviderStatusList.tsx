import type { Schemas } from '@hecate/sdk';
import { StatusBadge, type Tone } from '../../components/StatusBadge';
import { formatDuration } from '../../components/format';

type Status = Schemas['ProviderStatus'];
type Check = Schemas['ProviderReadinessCheck'];

const CHECK_TONE: Record<Check['status'], Tone> = { ok: 'ok', warning: 'warn', blocked: 'error', unknown: 'idle' };

/** Why routing would skip the provider now, and what the operator does about it (its routing check). */
function SkipReason({ status }: { status: Status }) {
  const routing = status.readiness_checks.find((c) => c.name === 'routing');
  if (status.routing_ready || !routing) return null;
  return (
    <div className="skip-reason">
      <p>
        <strong>Skipped by routing:</strong> {routing.message} <code>{status.routing_blocked_reason}</code>
      </p>
      {routing.operator_action && <p>What to do: {routing.operator_action}</p>}
    </div>
  );
}

function Checks({ checks }: { checks: Check[] }) {
  return (
    <ul className="checks" aria-label="Readiness checks">
      {checks.map((c) => (
        <li key={c.name}>
          <StatusBadge tone={CHECK_TONE[c.status]}>{`${c.name}: ${c.status}`}</StatusBadge> {c.message}
          {c.operator_action && c.status !== 'ok' && <div className="hint">What to do: {c.operator_action}</div>}
        </li>
      ))}
    </ul>
  );
}

/** Status and readiness of every provider: whether routing uses it, why not, and each check with its operator action. */
export function ProviderStatusList({
  statuses,
  selected,
  onSelect,
  onEdit,
}: {
  statuses: Status[];
  selected: string | undefined;
  onSelect: (name: string) => void;
  onEdit?: (name: string) => void;
}) {
  if (statuses.length === 0) return <p>No provider is configured yet.</p>;
  return (
    <ul className="provider-list" aria-label="Providers">
      {statuses.map((s) => (
        <li key={s.name} className="panel provider">
          <div className="provider-head">
            <h3>{s.name}</h3>
            <StatusBadge tone={s.routing_ready ? 'ok' : 'error'}>{s.routing_ready ? 'ready' : 'not ready'}</StatusBadge>
            <span className="hint">
              {s.kind} · {s.protocol} · <code>{s.base_url}</code>
            </span>
            <div className="actions">
              <button
                type="button"
                className="secondary"
                aria-pressed={selected === s.name}
                onClick={() => onSelect(s.name)}
                aria-label={`Models of ${s.name}`}
              >
                Models ({s.model_count})
              </button>
              {onEdit && (
                <button type="button" className="secondary" onClick={() => onEdit(s.name)} aria-label={`Edit ${s.name}`}>
                  Edit
                </button>
              )}
            </div>
          </div>
          <p className="hint">
            Health {s.status} · circuit {s.circuit_state}
            {s.latency_ms !== undefined && <> · latency {formatDuration(s.latency_ms)}</>}
            {s.default_model && (
              <>
                {' '}
                · default model <code>{s.default_model}</code>
              </>
            )}
            {s.last_error && <> · last error: {s.last_error}</>}
          </p>
          <SkipReason status={s} />
          <details>
            <summary>Readiness checks of {s.name}</summary>
            <Checks checks={s.readiness_checks} />
          </details>
        </li>
      ))}
    </ul>
  );
}
