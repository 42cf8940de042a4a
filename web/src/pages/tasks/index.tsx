import { Page } from '../../components/Page';

/** Placeholder until the page lands. */
export default function TasksPage() {
  return (
    <Page title="Tasks">
      <p>This page is not built yet.</p>
    </Page>
  );
}
