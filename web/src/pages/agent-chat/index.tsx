import { Page } from '../../components/Page';

/** Placeholder until the page lands. */
export default function AgentChatPage() {
  return (
    <Page title="Agent Chat">
      <p>This page is not built yet.</p>
    </Page>
  );
}
