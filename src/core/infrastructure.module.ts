import { Global, Inject, Injectable, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { EventBus } from '@core/bus/event-bus.port';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import { RedisEventBus } from '@core/bus/redis-event-bus.adapter';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { MemoryLiveStreamBuffer } from '@core/live-streams/memory-live-stream-buffer.adapter';
import { RedisLiveStreamBuffer } from '@core/live-streams/redis-live-stream-buffer.adapter';
import type { BullmqRunQueue } from '@core/queue/bullmq-run-queue.adapter';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { RunQueue } from '@core/queue/run-queue.port';
import { RedisConnections } from '@core/redis/redis-connections';

/** Creates the Redis connections of scaled mode and checks the eviction policy before anything uses them. */
export async function openRedis(config: AppConfig): Promise<RedisConnections | null> {
  if (config.mode !== 'scaled' || !config.redis.url) return null;
  const redis = new RedisConnections(config.redis.url);
  try {
    await redis.waitReady(10_000);
    await redis.checkEvictionPolicy(config.redis.allowEvictionPolicy);
  } catch (err) {
    await redis.close();
    throw err;
  }
  return redis;
}

@Injectable()
class InfrastructureCloser implements OnApplicationShutdown {
  constructor(
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    @Optional() @Inject(RedisConnections) private readonly redis: RedisConnections | null,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    await this.live.close();
    await this.queue.close();
    await this.bus.close();
    if (this.redis) await this.redis.close();
  }
}

/** The three ports (docs/design.md §3), bound to Redis in scaled mode and to in-process adapters in embedded mode. */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(redis: RedisConnections | null) {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: RedisConnections, useValue: redis },
        {
          provide: RunQueue,
          inject: [AppConfig],
          useFactory: (config: AppConfig): RunQueue => {
            if (!redis) return new InProcessRunQueue();
            // Required here, not imported: BullMQ is 170 modules the embedded mode never uses (bench/server-start).
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            const { BullmqRunQueue: Bullmq } = require('./queue/bullmq-run-queue.adapter') as { BullmqRunQueue: typeof BullmqRunQueue };
            return new Bullmq(redis, { prefix: config.redis.prefix, lockDurationMs: config.queue.lockDurationMs, enqueueTimeoutMs: 2000 });
          },
        },
        {
          provide: EventBus,
          inject: [AppConfig],
          useFactory: (config: AppConfig): EventBus => (redis ? new RedisEventBus(redis, `${config.redis.prefix}:bus:`) : new InProcessEventBus()),
        },
        {
          provide: LiveStreamBuffer,
          inject: [AppConfig, EventBus],
          useFactory: async (config: AppConfig, bus: EventBus): Promise<LiveStreamBuffer> => {
            const ttlMs = config.liveStreams.ttlSeconds * 1000;
            if (!redis) return new MemoryLiveStreamBuffer(ttlMs);
            const buffer = new RedisLiveStreamBuffer(redis, bus, ttlMs, `${config.redis.prefix}:live:`);
            await buffer.init();
            return buffer;
          },
        },
        InfrastructureCloser,
      ],
      exports: [RedisConnections, RunQueue, EventBus, LiveStreamBuffer],
    };
  }
}
