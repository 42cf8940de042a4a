import { Page } from '../../components/Page';

/** Placeholder until the page lands. */
export default function UsagePage() {
  return (
    <Page title="Usage and costs">
      <p>This page is not built yet.</p>
    </Page>
  );
}
