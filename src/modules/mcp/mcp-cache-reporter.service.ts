import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { busChannels, EventBus, type Unsubscribe } from '@core/bus';
import { McpCacheGauge } from '@core/health/system-info.decorator';
import type { McpCacheCounts } from '@core/metrics/metrics.service';
import type { CacheReplyMessage } from '@core/bus';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { McpClientPool } from './mcp-client-pool.service';

/** Worker side of `GET /hecate/v1/system/mcp/cache`: answers each request with this worker's cache counts (and /metrics). */
@Injectable()
export class McpCacheReporter implements OnApplicationBootstrap, OnModuleDestroy {
  private unsubscribe: Unsubscribe | undefined;
  private readonly worker = `${hostname()}:${process.pid}`;

  constructor(
    private readonly pool: McpClientPool,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  /** `hecate_mcp_cache_entries{state}` of this worker, read at each scrape. */
  @McpCacheGauge()
  cacheEntries(): McpCacheCounts {
    const { entries, idle } = this.pool.stats();
    return { inUse: entries - idle, idle };
  }

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = await this.bus.listen(busChannels.mcpCacheRequest, ({ id }) => {
      if (typeof id !== 'string') return;
      const reply: CacheReplyMessage = { worker: this.worker, ...this.pool.stats() };
      void this.bus
        .send(busChannels.mcpCacheReply.of(id), reply)
        .catch(ignoreFailure('answering an MCP cache stats request', 'the collector waits a bounded time and sums the workers that answered'));
    });
  }

  async onModuleDestroy(): Promise<void> {
    // Shutting down: no request can be answered any more anyway.
    await this.unsubscribe?.().catch(() => undefined);
  }
}
