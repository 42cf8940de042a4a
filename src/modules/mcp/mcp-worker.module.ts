import { Module, OnModuleInit } from '@nestjs/common';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
import { TasksModule } from '@modules/tasks';
import { McpCacheReporter } from './mcp-cache-reporter.service';
import { McpClientPool } from './mcp-client-pool.service';
import { McpProbeRunner } from './mcp-probe-runner.service';

/**
 * Worker-only (STYLE rule 16, DESIGN §11.2): the MCP client pool, the probe runner and the cache reporter. Servers
 * are started through the command sandbox the tasks runners register, so the api role never builds this.
 */
@Module({
  imports: [TasksModule],
  providers: [McpClientPool, McpProbeRunner, McpCacheReporter],
  exports: [McpClientPool, McpProbeRunner],
})
export class McpWorkerModule implements OnModuleInit {
  constructor(
    private readonly registry: SystemInfoRegistry,
    private readonly pool: McpClientPool,
  ) {}

  onModuleInit(): void {
    this.registry.addLiveness('mcp_cache', () => this.pool.stats());
  }
}
