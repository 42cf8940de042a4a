import { Page } from '../../components/Page';
import { Adapters } from './Adapters';
import { ApiKeys } from './ApiKeys';
import { Health } from './Health';
import './system.css';

/** Keys and system: API keys, health, queues and live workers, the MCP client cache, agent adapters and their probes. */
export default function SystemPage() {
  return (
    <Page title="Keys and system">
      <ApiKeys />
      <Health />
      <Adapters />
    </Page>
  );
}
