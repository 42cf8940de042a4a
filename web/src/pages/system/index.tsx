import { Page } from '../../components/Page';

/** Placeholder until the page lands. */
export default function SystemPage() {
  return (
    <Page title="Keys and system">
      <p>This page is not built yet.</p>
    </Page>
  );
}
