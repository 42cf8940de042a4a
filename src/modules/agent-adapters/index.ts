/** The agent-adapters module's public face (docs/design.md §5): the catalog, the ACP process, worker discovery. */
export { AdapterCatalog } from './adapter-catalog';
export type { AdapterDefinition } from './adapter-definitions';
export { AdapterDiscoveryService, initializeRequest } from './adapter-discovery.service';
export { AcpProcess, AcpProtocolError } from './acp-process';
export type { Acp, AcpClientHandlers } from './acp-process';
export { AgentAdaptersController } from './agent-adapters.controller';
export { AgentAdaptersModule, AgentAdaptersWorkerModule } from './agent-adapters.module';
export type { AdapterHealth, AdapterRow } from './agent-adapters.types';
