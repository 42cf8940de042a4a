import { hostname } from 'node:os';
import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventBus, Unsubscribe } from '@core/bus/event-bus.port';
import { MetricsService } from '@core/metrics/metrics.service';
import { CacheReplyMessage, mcpChannels } from './mcp-bus';
import { McpClientPool } from './mcp-client-pool.service';

/** Worker side of `GET /hecate/v1/system/mcp/cache`: answers each request with this worker's cache counts (and /metrics). */
@Injectable()
export class McpCacheReporter implements OnApplicationBootstrap, OnModuleDestroy {
  private unsubscribe: Unsubscribe | undefined;
  private readonly worker = `${hostname()}:${process.pid}`;

  constructor(
    private readonly pool: McpClientPool,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.metrics.countMcpCache(() => {
      const { entries, idle } = this.pool.stats();
      return { inUse: entries - idle, idle };
    });
    this.unsubscribe = await this.bus.subscribe(mcpChannels.cacheRequest, (_channel, raw) => {
      const { id } = raw as { id: string };
      if (typeof id !== 'string') return;
      const reply: CacheReplyMessage = { worker: this.worker, ...this.pool.stats() };
      void this.bus.publish(mcpChannels.cacheReply(id), reply).catch(() => undefined);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.unsubscribe?.().catch(() => undefined);
  }
}
