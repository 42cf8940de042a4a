import { EventBus } from '@core/bus/event-bus.port';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import { RedisEventBus } from '@core/bus/redis-event-bus.adapter';
import { RedisConnections } from '@core/redis/redis-connections';
import { testRedisUrl, uniqueId } from './infra';

export interface BusHarness {
  bus: EventBus;
  close(): Promise<void>;
}

/** Both EventBus adapters, for a `describe.each`: in-process, and Redis (the test Redis, a fresh channel prefix). */
export const busAdapters: [string, () => Promise<BusHarness>][] = [
  ['in-process', async () => ({ bus: new InProcessEventBus(), close: async () => undefined })],
  [
    'redis',
    async () => {
      const redis = new RedisConnections(testRedisUrl());
      await redis.waitReady();
      const bus = new RedisEventBus(redis, `${uniqueId('bus')}:`);
      return { bus, close: async () => (await bus.close(), await redis.close()) };
    },
  ],
];
