import { HecateError } from '@hecate/sdk';
import { useAuth } from '../app/hecate';
import './components.css';

/** Fields every error envelope has (docs/api.md §4.2); the rest are the type's own (path, expected, found, …). */
const ENVELOPE_FIELDS = new Set(['type', 'message', 'user_message', 'operator_action', 'request_id', 'trace_id']);

/** The fields an error's type adds to the envelope, for an operator to act on (a drifted patch's path, expected, found). */
function ownFields(error: HecateError): Array<[string, unknown]> {
  return Object.entries(error.body ?? {}).filter(([k, v]) => !ENVELOPE_FIELDS.has(k) && v !== undefined && v !== null && v !== '');
}

/**
 * An error as the API contract gives it (docs/api.md §4.2): what happened for a person, what an operator does about it,
 * the fields its type adds, and the request id to look the request up by. A 401 offers to sign in again. Nothing is
 * shown while there is no error, so a caller passes its error as it is.
 */
export function ErrorNotice({ error, onRetry, title }: { error: unknown; onRetry?: () => void; title?: string }) {
  const { signOut } = useAuth();
  if (error === undefined || error === null) return null;
  const e = error instanceof HecateError ? error : undefined;
  const headline = e ? e.user_message || e.message : error instanceof Error ? error.message : String(error);
  const fields = e ? ownFields(e) : [];
  return (
    <div className="error-notice" role="alert">
      <p className="error-title">
        <strong>{title ?? 'Something went wrong'}:</strong> {headline}
      </p>
      {e && e.message && e.message !== headline && <p className="error-detail">{e.message}</p>}
      {e?.operator_action && <p className="error-detail">What to do: {e.operator_action}</p>}
      {fields.length > 0 && (
        <dl className="error-fields">
          {fields.map(([k, v]) => (
            <div key={k}>
              <dt>{k.replace(/_/g, ' ')}</dt>
              <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
            </div>
          ))}
        </dl>
      )}
      {e && (
        <p className="error-meta">
          <code>{e.type}</code>
          {e.status > 0 && <> · HTTP {e.status}</>}
          {e.request_id && (
            <>
              {' '}
              · request <code>{e.request_id}</code>
            </>
          )}
        </p>
      )}
      <div className="actions">
        {e?.status === 401 && (
          <button type="button" onClick={() => signOut('Your credential was refused; sign in again.')}>
            Sign in again
          </button>
        )}
        {onRetry && (
          <button type="button" className="secondary" onClick={onRetry}>
            Try again
          </button>
        )}
      </div>
    </div>
  );
}
