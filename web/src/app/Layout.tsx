import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { useAuth, useCaller } from './hecate';
import { PAGES } from './routes';

const KIND_LABEL = { operator: 'Operator', local_operator: 'Local operator', api_key: 'API key' } as const;

/** The signed-in frame: a banner with the caller, the nav of the pages its scopes allow, and the main region. */
export function Layout({ children }: { children: ReactNode }) {
  const caller = useCaller();
  const { signOut } = useAuth();
  const [location] = useLocation();
  const pages = PAGES.filter((p) => caller.can(p.scope));
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="banner">
        <span className="brand">Hecate</span>
        <span className="caller">
          <span className="visually-hidden">Signed in as </span>
          {KIND_LABEL[caller.kind]} · tenant {caller.tenant_id} · scopes {caller.scopes.join(', ') || 'none'}
        </span>
        {caller.kind === 'local_operator' ? (
          <Link href="/sign-in">Use a key</Link>
        ) : (
          <button type="button" className="secondary" onClick={() => signOut()}>
            Sign out
          </button>
        )}
      </header>
      <nav className="nav" aria-label="Console">
        <ul>
          {pages.map((p) => {
            const current = location === p.href || location.startsWith(`${p.href}/`);
            return (
              <li key={p.href}>
                <Link href={p.href} aria-current={current ? 'page' : undefined}>
                  {p.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
