import { Module, OnModuleInit } from '@nestjs/common';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
import { McpCacheStatsService } from './mcp-cache-stats.service';
import { McpProbeService } from './mcp-probe.service';

/**
 * The MCP client's api half (both roles load it; only the api calls it): the probe waits for a worker, the cache
 * stats ask the workers. Nothing here starts a process; that is McpWorkerModule.
 */
@Module({
  providers: [McpProbeService, McpCacheStatsService],
  exports: [McpProbeService, McpCacheStatsService],
})
export class McpModule implements OnModuleInit {
  constructor(
    private readonly registry: SystemInfoRegistry,
    private readonly cache: McpCacheStatsService,
  ) {}

  onModuleInit(): void {
    this.registry.addStats('mcp_cache', () => this.cache.collect(500));
  }
}
