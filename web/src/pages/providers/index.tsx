import { Page } from '../../components/Page';

/** Placeholder until the page lands. */
export default function ProvidersPage() {
  return (
    <Page title="Providers">
      <p>This page is not built yet.</p>
    </Page>
  );
}
