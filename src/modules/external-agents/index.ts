/** The external-agents module's public face (docs/design.md §5): Agent Chat's External Agent turns use it through here. */
export { ExternalAgentsModule, ExternalAgentsWorkerModule } from './external-agents.module';
export { ExternalAgentSessions } from './external-agent-sessions.service';
export { AdapterSessionHost, type AdapterTurnHandlers, type LiveAdapter, type Restored } from './adapter-session-host';
export type { AdapterSessionRow } from './external-agents.types';
export { ExternalAgentsErrorType } from './external-agents.errors';
