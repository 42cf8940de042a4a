import { useId, useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import { HecateError } from '@hecate/sdk';
import { ErrorNotice } from '../components/ErrorNotice';
import { useAuth } from './hecate';

/** Where to go after signing in: a path of this console from `?next=`, never another origin. */
export function nextPath(search: string): string | undefined {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : undefined;
}

/** The credential is entered once and kept for the tab (sessionStorage); it is checked before it is kept. */
export function SignIn() {
  const { state, signIn } = useAuth();
  const [, navigate] = useLocation();
  const search = useSearch();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const inputId = useId();
  const hintId = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(token.trim());
      navigate(nextPath(search) ?? '/', { replace: true });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const reason = state.status === 'signed-out' ? state.reason : undefined;
  const rejected = error instanceof HecateError && error.status === 401;
  return (
    <section className="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to Hecate</h1>
      {state.status === 'signed-in' && (
        <p>
          Signed in as {state.caller.kind === 'api_key' ? `an API key of tenant ${state.caller.tenant_id}` : 'the operator'}. Sign in with another credential
          below, or <a href="/">go back</a>.
        </p>
      )}
      {reason && <p role="status">{reason}</p>}
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor={inputId}>API key or operator token</label>
        <input
          id={inputId}
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          aria-describedby={hintId}
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        <p id={hintId} className="hint">
          Kept in this tab only, until you sign out or close it.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {rejected ? (
        <p role="alert">This credential is not accepted: check the key, or ask the operator for one.</p>
      ) : error ? (
        <ErrorNotice error={error} />
      ) : null}
    </section>
  );
}
