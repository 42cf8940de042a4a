import { Module } from '@nestjs/common';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { AdapterCatalog } from './adapter-catalog';
import { AdapterDiscoveryService } from './adapter-discovery.service';
import { AgentAdaptersService } from './agent-adapters.service';

/** External-agent adapters for both roles: the catalog (definitions) and the api side that asks workers. */
@Module({
  providers: [AdapterCatalog, AgentAdaptersService],
  exports: [AdapterCatalog, AgentAdaptersService],
})
export class AgentAdaptersModule {}

/** Worker-only (DESIGN §11.2): discovery, versions and probes spawn adapters, through the command sandbox. */
@Module({
  imports: [AgentAdaptersModule, WorkspacesWorkerModule],
  providers: [AdapterDiscoveryService],
  exports: [AdapterDiscoveryService],
})
export class AgentAdaptersWorkerModule {}
