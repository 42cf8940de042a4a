import { Module } from '@nestjs/common';
import { AgentAdaptersModule, AgentAdaptersWorkerModule } from '@modules/agent-adapters';
import { AdapterSessionHost } from './adapter-session-host';
import { AdapterSessionRepository } from './adapter-session.repository';
import { ExternalAgentSessions } from './external-agent-sessions.service';
import { SessionKeysRepository } from './session-keys.repository';

/**
 * External Agent sessions for both roles (docs/design.md §11.2–11.3): the api side that opens and releases a session's
 * adapter (ExternalAgentSessions), the adapter-session lease and the session's gateway keys.
 */
@Module({
  providers: [AdapterSessionRepository, SessionKeysRepository, ExternalAgentSessions],
  exports: [ExternalAgentSessions, AdapterSessionRepository, SessionKeysRepository],
})
export class ExternalAgentsModule {}

/**
 * Worker-only (docs/style.md rule 16): the live ACP adapter process of each External Agent session this worker holds
 * (AdapterSessionHost: open, keep, restore, end), started through the agent-adapters module's discovery and sandbox.
 */
@Module({
  imports: [ExternalAgentsModule, AgentAdaptersModule, AgentAdaptersWorkerModule],
  providers: [AdapterSessionHost],
  exports: [AdapterSessionHost],
})
export class ExternalAgentsWorkerModule {}
