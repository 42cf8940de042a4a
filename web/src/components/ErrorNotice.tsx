import { HecateError } from '@hecate/sdk';
import { useAuth } from '../app/hecate';

/**
 * An error as the API contract gives it (docs/api.md §4.2): what happened for a person, what an operator does about it,
 * and the request id to look the request up by. A 401 offers to sign in again.
 */
export function ErrorNotice({ error, onRetry, title }: { error: unknown; onRetry?: () => void; title?: string }) {
  const { signOut } = useAuth();
  const e = error instanceof HecateError ? error : undefined;
  const headline = e ? e.user_message || e.message : error instanceof Error ? error.message : String(error);
  return (
    <div className="error-notice" role="alert">
      <p className="error-title">
        <strong>{title ?? 'Something went wrong'}:</strong> {headline}
      </p>
      {e && e.message && e.message !== headline && <p className="error-detail">{e.message}</p>}
      {e?.operator_action && <p className="error-detail">What to do: {e.operator_action}</p>}
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
