import { Module } from '@nestjs/common';
import { SystemStat } from '@core/health/system-info.decorator';
import { McpCacheStatsService } from './mcp-cache-stats.service';
import { McpProbeService } from './mcp-probe.service';

/**
 * The MCP client's api half (both roles load it; only the api calls it): the probe waits for a worker, the cache
 * stats ask the workers (`mcp_cache` of the system stats). Nothing here starts a process; that is McpWorkerModule.
 */
@Module({
  providers: [McpProbeService, McpCacheStatsService],
  exports: [McpProbeService, McpCacheStatsService],
})
export class McpModule {
  constructor(private readonly cache: McpCacheStatsService) {}

  /** The system stats wait at most 500 ms for the workers' answers. */
  @SystemStat('mcp_cache')
  cacheStats() {
    return this.cache.collect(500);
  }
}
