import { Global, Module } from '@nestjs/common';
import { SAVED_AGENTS } from '@modules/tasks';
import { AgentsRepository } from './agents.repository';
import { AgentsService } from './agents.service';

/**
 * Saved agents. Provides SAVED_AGENTS, with which tasks and Agent Chat resolve `agent_id`. Global so that those modules
 * see the token without importing this one: this module imports the tasks module's vocabulary (SavedAgentSource,
 * McpSecretKeyMissingError), so the arrow cannot go the other way. It has no lifecycle hooks, so being global changes
 * no startup or shutdown order.
 */
@Global()
@Module({
  providers: [AgentsRepository, AgentsService, { provide: SAVED_AGENTS, useExisting: AgentsService }],
  exports: [AgentsService, SAVED_AGENTS],
})
export class AgentsModule {}
