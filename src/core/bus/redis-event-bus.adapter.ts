import type { Redis } from 'ioredis';
import { rootLogger } from '@core/logging/logger';
import type { RedisConnections } from '@core/redis/redis-connections';
import { BusHandler, EventBus, Unsubscribe } from './event-bus.port';

/**
 * Redis pub/sub EventBus: one subscriber connection per process, channels refcounted (the first local
 * subscriber subscribes in Redis, the last one unsubscribes). ioredis re-subscribes after a reconnect
 * (e.g. `CLIENT KILL TYPE pubsub` or a Redis restart); listeners of onReconnect then refill from Postgres.
 */
export class RedisEventBus extends EventBus {
  private readonly subscriber: Redis;
  private readonly handlers = new Map<string, Set<BusHandler>>();
  private readonly reconnectListeners = new Set<() => void>();
  private connectedOnce = false;

  constructor(
    private readonly redis: RedisConnections,
    private readonly prefix: string,
  ) {
    super();
    this.subscriber = redis.createBlocking('bus-subscriber');
    this.subscriber.on('pmessage', (pattern: string, channel: string, raw: string) => this.deliver(pattern, channel, raw));
    this.subscriber.on('message', (channel: string, raw: string) => this.deliver(channel, channel, raw));
    this.subscriber.on('ready', () => {
      if (this.connectedOnce) {
        rootLogger().info({ patterns: this.handlers.size }, 'event bus re-subscribed after reconnect');
        for (const l of this.reconnectListeners) l();
      }
      this.connectedOnce = true;
    });
  }

  private key(pattern: string): string {
    return `${this.prefix}${pattern}`;
  }

  private deliver(redisPattern: string, redisChannel: string, raw: string): void {
    const set = this.handlers.get(redisPattern);
    if (!set) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    const channel = redisChannel.slice(this.prefix.length);
    for (const handler of set) {
      try {
        handler(channel, message);
      } catch (err) {
        rootLogger().error({ channel, err: String(err) }, 'bus handler threw');
      }
    }
  }

  async publish(channel: string, message: unknown): Promise<void> {
    await this.redis.command.publish(this.key(channel), JSON.stringify(message));
  }

  async subscribe(pattern: string, handler: BusHandler): Promise<Unsubscribe> {
    const key = this.key(pattern);
    const isPattern = pattern.includes('*');
    let set = this.handlers.get(key);
    if (!set) {
      set = new Set();
      this.handlers.set(key, set);
      if (isPattern) await this.subscriber.psubscribe(key);
      else await this.subscriber.subscribe(key);
    }
    set.add(handler);
    return async () => {
      const current = this.handlers.get(key);
      if (!current) return;
      current.delete(handler);
      if (current.size === 0) {
        this.handlers.delete(key);
        try {
          if (isPattern) await this.subscriber.punsubscribe(key);
          else await this.subscriber.unsubscribe(key);
        } catch {
          // Disconnected: nothing to unsubscribe; ioredis will not re-subscribe a removed channel.
        }
      }
    };
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.reconnectListeners.clear();
  }
}
