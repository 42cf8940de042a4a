import { Suspense } from 'react';
import { Redirect, Route, Switch, useLocation } from 'wouter';
import { ErrorNotice } from '../components/ErrorNotice';
import { Loading } from '../components/Loading';
import { HecateProvider, useAuth, useCaller } from './hecate';
import { Layout } from './Layout';
import { homeFor, PAGES } from './routes';
import { SignIn } from './SignIn';

function NoPages() {
  const caller = useCaller();
  return (
    <section aria-labelledby="no-pages-title">
      <h1 id="no-pages-title">Nothing to show for this key</h1>
      <p>
        This credential has the scopes {caller.scopes.join(', ') || 'none'}; the console&apos;s pages need <code>operator</code>. Ask the operator for a key
        with it, or sign out and use another.
      </p>
    </section>
  );
}

function NotAllowed({ scope }: { scope: string }) {
  return (
    <section aria-labelledby="not-allowed-title">
      <h1 id="not-allowed-title">Not available to this key</h1>
      <p>
        This page needs the <code>{scope}</code> scope, which the credential you signed in with does not have.
      </p>
    </section>
  );
}

function NotFound() {
  return (
    <section aria-labelledby="not-found-title">
      <h1 id="not-found-title">No such page</h1>
      <p>The console has no page at this address.</p>
    </section>
  );
}

function SignedInRoutes() {
  const caller = useCaller();
  const home = homeFor(caller.can);
  return (
    <Layout>
      <Suspense fallback={<Loading what="the page" />}>
        <Switch>
          <Route path="/">{home ? <Redirect to={home} replace /> : <NoPages />}</Route>
          <Route path="/sign-in" component={SignIn} />
          {PAGES.flatMap((page) =>
            page.paths.map((path) => (
              <Route key={path} path={path}>
                {caller.can(page.scope) ? <page.Component /> : <NotAllowed scope={page.scope} />}
              </Route>
            )),
          )}
          <Route component={NotFound} />
        </Switch>
      </Suspense>
    </Layout>
  );
}

function Gate() {
  const { state, retry } = useAuth();
  const [location] = useLocation();
  if (state.status === 'checking') return <Loading what="the console" />;
  if (state.status === 'unreachable') {
    return (
      <main id="main" className="main">
        <h1>The server did not answer</h1>
        <ErrorNotice error={state.error} onRetry={retry} />
      </main>
    );
  }
  if (state.status === 'signed-out') {
    if (location !== '/sign-in') return <Redirect to={`/sign-in${location === '/' ? '' : `?next=${encodeURIComponent(location)}`}`} replace />;
    return (
      <main id="main" className="main signed-out">
        <SignIn />
      </main>
    );
  }
  return <SignedInRoutes />;
}

export function App() {
  return (
    <HecateProvider>
      <Gate />
    </HecateProvider>
  );
}
