import { Module } from '@nestjs/common';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { AdapterCatalog } from './adapter-catalog';
import { AdapterDiscoveryService } from './adapter-discovery.service';
import { AgentAdaptersService } from './agent-adapters.service';
import { AgentAdaptersWorker } from './agent-adapters.worker';

/** External-agent adapters for both roles: the catalog (definitions) and the api side that asks workers. */
@Module({
  providers: [AdapterCatalog, AgentAdaptersService],
  exports: [AdapterCatalog, AgentAdaptersService],
})
export class AgentAdaptersModule {}

/** Worker-only (docs/design.md §11): discovery, versions and probes spawn adapters, through the command sandbox; the worker side of the api's requests. */
@Module({
  imports: [AgentAdaptersModule, WorkspacesWorkerModule],
  providers: [AdapterDiscoveryService, AgentAdaptersWorker],
  exports: [AdapterDiscoveryService],
})
export class AgentAdaptersWorkerModule {}
