import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { HecateClient, HecateError, type Schemas } from '@hecate/sdk';

/** The caller of this tab's credential, as `GET /hecate/v1/whoami` describes it. */
export type Caller = Schemas['Caller'];
export type Scope = Caller['scopes'][number];

/** The tab's credential lives in sessionStorage only: never localStorage (other tabs, after closing) or the URL. */
const TOKEN_KEY = 'hecate.console.token';

const storedToken = (): string | null => window.sessionStorage.getItem(TOKEN_KEY);

/** A client of this server (the page's own origin) with the tab's credential, or none (the local operator). */
export const clientFor = (token: string | null): HecateClient => new HecateClient({ baseUrl: window.location.origin, ...(token ? { apiKey: token } : {}) });

export type AuthState =
  | { status: 'checking' }
  | { status: 'signed-out'; reason?: string }
  | { status: 'unreachable'; error: unknown }
  | { status: 'signed-in'; client: HecateClient; caller: Caller };

interface Auth {
  state: AuthState;
  /** Verifies the credential (whoami) and keeps it for the tab; rejects with the HecateError when it does not verify. */
  signIn(token: string): Promise<void>;
  /** Forgets the tab's credential. */
  signOut(reason?: string): void;
  /** Asks the server again who the tab's credential is (after an outage). */
  retry(): void;
}

const AuthContext = createContext<Auth | null>(null);

async function whoami(client: HecateClient): Promise<Caller> {
  return (await client.get('/hecate/v1/whoami')).data;
}

/**
 * Holds the tab's sign-in. On load the stored credential (or none: the local operator, when the server has no token)
 * is checked with whoami; a 401 means the sign-in page.
 */
export function HecateProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<AuthState>({ status: 'checking' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    const token = storedToken();
    const client = clientFor(token);
    whoami(client).then(
      (caller) => live && setState({ status: 'signed-in', client, caller }),
      (error: unknown) => {
        if (!live) return;
        if (error instanceof HecateError && error.status === 401) {
          window.sessionStorage.removeItem(TOKEN_KEY);
          setState({ status: 'signed-out', reason: token ? 'The stored credential is no longer accepted; sign in again.' : undefined });
        } else setState({ status: 'unreachable', error });
      },
    );
    return () => {
      live = false;
    };
  }, [attempt]);

  const signIn = useCallback(async (token: string) => {
    const client = clientFor(token);
    const caller = await whoami(client);
    window.sessionStorage.setItem(TOKEN_KEY, token);
    setState({ status: 'signed-in', client, caller });
  }, []);

  const signOut = useCallback((reason?: string) => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    setState({ status: 'signed-out', reason });
  }, []);

  const retry = useCallback(() => {
    setState({ status: 'checking' });
    setAttempt((n) => n + 1);
  }, []);

  const auth = useMemo(() => ({ state, signIn, signOut, retry }), [state, signIn, signOut, retry]);
  return <AuthContext.Provider value={auth}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth() outside <HecateProvider>');
  return auth;
}

function useSignedIn(): Extract<AuthState, { status: 'signed-in' }> {
  // Pages render only inside the signed-in layout (App), so this holds wherever a page calls it.
  const { state } = useAuth();
  if (state.status !== 'signed-in') throw new Error('useHecate()/useCaller() before sign-in');
  return state;
}

/** The tab's HecateClient (the one way the console talks to the server). */
export function useHecate(): HecateClient {
  return useSignedIn().client;
}

/** The caller's kind, tenant and scopes, and `can(scope)` to decide what to offer. */
export function useCaller(): Caller & { can(scope: Scope): boolean } {
  const { caller } = useSignedIn();
  return useMemo(() => ({ ...caller, can: (scope: Scope) => caller.scopes.includes(scope) }), [caller]);
}
