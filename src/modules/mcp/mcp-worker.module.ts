import { Module } from '@nestjs/common';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { McpCacheReporter } from './mcp-cache-reporter.service';
import { McpClientPool } from './mcp-client-pool.service';
import { McpProbeRunner } from './mcp-probe-runner.service';

/**
 * Worker-only (docs/style.md rule 16, docs/design.md §11.2): the MCP client pool, the probe runner and the cache reporter. Servers
 * are started through the worker's command sandbox (WorkspacesWorkerModule), so the api role never builds this. The pool
 * is the `mcp_cache` field of the worker's /healthz.
 */
@Module({
  imports: [WorkspacesWorkerModule],
  providers: [McpClientPool, McpProbeRunner, McpCacheReporter],
  exports: [McpClientPool, McpProbeRunner],
})
export class McpWorkerModule {}
