import { Redis, RedisOptions } from 'ioredis';
import { rootLogger, scrubSecrets } from '@core/logging/logger';

export class RedisEvictionPolicyError extends Error {
  constructor(policy: string) {
    super(
      `Redis maxmemory-policy is "${policy}"; queues and live streams need "noeviction" (an evicted job is a lost run). ` +
        'Set maxmemory-policy noeviction, or GATEWAY_REDIS_ALLOW_EVICTION_POLICY=true for a managed Redis that hides CONFIG.',
    );
    this.name = 'RedisEvictionPolicyError';
  }
}

/** Redis's `maxmemory-policy` (throws when CONFIG is hidden, as on some managed Redis). */
export async function evictionPolicy(client: Redis): Promise<string> {
  const reply = (await client.config('GET', 'maxmemory-policy')) as string[];
  return reply[1] ?? 'unknown';
}

/**
 * Owns every ioredis connection of the process. Producers fail fast when Redis is down
 * (`enableOfflineQueue: false`); blocking/worker connections retry forever (`maxRetriesPerRequest: null`).
 */
export class RedisConnections {
  private readonly all = new Set<Redis>();
  readonly command: Redis;

  constructor(private readonly url: string) {
    // Auto-pipelining: the commands issued in one event-loop tick (live-buffer appends and doorbells of many streams,
    // their readers' range reads) go out in one write.
    this.command = this.create('command', { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true });
  }

  create(name: string, extra: RedisOptions = {}): Redis {
    const client = new Redis(this.url, {
      connectionName: `hecate-${name}`,
      lazyConnect: false,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
      ...extra,
    });
    const log = rootLogger();
    let lastError = '';
    client.on('error', (err: Error) => {
      const msg = scrubSecrets(err.message);
      if (msg !== lastError) log.warn({ connection: name, err: msg }, 'redis connection error');
      lastError = msg;
    });
    client.on('ready', () => {
      if (lastError) log.info({ connection: name }, 'redis connection restored');
      lastError = '';
    });
    this.all.add(client);
    return client;
  }

  /** Connection for BullMQ workers and blocking commands. */
  createBlocking(name: string): Redis {
    return this.create(name, { maxRetriesPerRequest: null, enableOfflineQueue: true });
  }

  async waitReady(timeoutMs = 5000): Promise<void> {
    if (this.command.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Redis not reachable within ${timeoutMs} ms`)), timeoutMs);
      this.command.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Refuses to start unless maxmemory-policy is noeviction (or the override is set, with a warning). */
  async checkEvictionPolicy(allowOverride: boolean): Promise<void> {
    let policy: string;
    try {
      policy = await evictionPolicy(this.command);
    } catch (err) {
      if (allowOverride) {
        rootLogger().warn(
          { err: String(err) },
          'WARNING: cannot read Redis maxmemory-policy (CONFIG hidden); continuing because GATEWAY_REDIS_ALLOW_EVICTION_POLICY=true. If Redis evicts keys, queued runs are delayed until the reconciler requeues them.',
        );
        return;
      }
      throw new Error(
        `cannot read Redis maxmemory-policy (${String(err)}); set GATEWAY_REDIS_ALLOW_EVICTION_POLICY=true for a managed Redis that hides CONFIG`,
        { cause: err },
      );
    }
    if (policy !== 'noeviction') {
      if (!allowOverride) throw new RedisEvictionPolicyError(policy);
      rootLogger().warn({ policy }, 'WARNING: Redis maxmemory-policy is not noeviction; continuing because of the override');
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.all].map(async (c) => {
        try {
          await c.quit();
        } catch {
          c.disconnect();
        }
      }),
    );
    this.all.clear();
  }
}
