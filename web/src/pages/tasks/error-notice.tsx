import { HecateError } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';

/** Fields every error envelope has (docs/api.md §4.2); the rest are the type's own (path, expected, found, …). */
const ENVELOPE_FIELDS = new Set(['type', 'message', 'user_message', 'operator_action', 'request_id', 'trace_id']);

/**
 * A failed call as the console shows errors (the shared notice: what happened, what to do, the type and request id),
 * followed by the fields the error's type adds — for a drifted patch, the path and what was expected and found.
 */
export function TaskError({ error, title }: { error: unknown; title?: string }) {
  if (error === undefined || error === null) return null;
  const extra =
    error instanceof HecateError
      ? Object.entries(error.body ?? {}).filter(([k, v]) => !ENVELOPE_FIELDS.has(k) && v !== undefined && v !== null && v !== '')
      : [];
  return (
    <div className="tasks-error">
      <ErrorNotice error={error} title={title} />
      {extra.length > 0 && (
        <dl className="tasks-dl tasks-error__fields">
          {extra.map(([k, v]) => (
            <div key={k}>
              <dt>{k.replace(/_/g, ' ')}</dt>
              <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
