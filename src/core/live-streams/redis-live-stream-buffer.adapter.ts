import { busChannels, type LiveStreamBell } from '@core/bus/channels';
import type { EventBus, Unsubscribe } from '@core/bus/event-bus.port';
import type { RedisConnections } from '@core/redis/redis-connections';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { LiveChunk, LiveReadOptions, LiveReadResult, LiveStreamBuffer } from './live-stream-buffer.port';

const bellLost = ignoreFailure('ringing a live-stream doorbell', 'a blocked reader reads Redis again when its blockMs runs out');

// Index and entry in one atomic step: INCR the counter, XADD with id "<index>-1", refresh both TTLs.
const APPEND = `
local i = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], i .. '-1', 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return i`;

const DONE = `
local i = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], i .. '-1', 'done', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return i`;

// Entries after an id and, when there are none, whether the stream exists at all — one round trip.
const READ = `
local e
if ARGV[2] == '0' then e = redis.call('XRANGE', KEYS[1], ARGV[1], '+') else e = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2]) end
if #e == 0 then return {redis.call('EXISTS', KEYS[1]), e} end
return {1, e}`;

/** What an append's doorbell carries: the chunk itself, so a reader waiting for exactly it needs no read. */
type Doorbell = LiveStreamBell;

/**
 * Redis Streams LiveStreamBuffer. Entry id `<index>-1` makes "read after index" an exclusive XRANGE.
 * Live tail does not hold a blocking connection per reader: appends ring a bus doorbell and waiting
 * readers re-read, so one subscriber connection serves every tailing reader of the process.
 */
export class RedisLiveStreamBuffer extends LiveStreamBuffer {
  private readonly waiters = new Map<string, Set<(bell?: Doorbell | number) => void>>();
  private unsubscribe: Unsubscribe | undefined;

  constructor(
    private readonly redis: RedisConnections,
    private readonly bus: EventBus,
    private readonly ttlMs: number,
    private readonly prefix = 'hecate:live:',
  ) {
    super();
  }

  async init(): Promise<void> {
    this.unsubscribe = await this.bus.listen(busChannels.liveStream.all, (message, channel) => {
      const id = busChannels.liveStream.idOf(channel);
      const set = this.waiters.get(id);
      if (set) for (const w of [...set]) w(message);
    });
    this.bus.onReconnect(() => {
      for (const set of this.waiters.values()) for (const w of [...set]) w();
    });
  }

  private keys(streamId: string): [string, string] {
    return [`${this.prefix}${streamId}`, `${this.prefix}${streamId}:n`];
  }

  async append(streamId: string, data: string): Promise<number> {
    const index = (await this.redis.command.eval(APPEND, 2, ...this.keys(streamId), data, String(this.ttlMs))) as number;
    const bell: Doorbell = { i: index, d: data };
    void this.bus.send(busChannels.liveStream.of(streamId), bell).catch(bellLost);
    return index;
  }

  async markDone(streamId: string): Promise<void> {
    await this.redis.command.eval(DONE, 2, ...this.keys(streamId), String(this.ttlMs));
    const bell: Doorbell = { i: -1 };
    void this.bus.send(busChannels.liveStream.of(streamId), bell).catch(bellLost);
  }

  private async readNow(streamId: string, afterIndex: number, limit?: number): Promise<LiveReadResult> {
    const [key] = this.keys(streamId);
    const [exists, entries] = (await this.redis.command.eval(READ, 1, key, `(${afterIndex}-1`, String(limit ? limit + 1 : 0))) as [
      number,
      [string, string[]][],
    ];
    if (entries.length === 0 && exists === 0) return { chunks: [], done: false, expired: true };
    const chunks: LiveChunk[] = [];
    let done = false;
    for (const [id, fields] of entries) {
      if (fields[0] === 'done') {
        done = true;
        break;
      }
      if (limit && chunks.length >= limit) break;
      chunks.push({ index: Number(id.split('-')[0]), data: fields[1] });
    }
    return { chunks, done, expired: false };
  }

  async read(streamId: string, afterIndex: number, options: LiveReadOptions = {}): Promise<LiveReadResult> {
    const first = await this.readNow(streamId, afterIndex, options.limit);
    const ready = (r: LiveReadResult) => r.chunks.length > 0 || r.done || (r.expired && !options.waitForStart);
    if (ready(first) || !options.blockMs) return first;
    return new Promise<LiveReadResult>((resolve, reject) => {
      let set = this.waiters.get(streamId) as Set<(bell?: Doorbell | number) => void> | undefined;
      if (!set) {
        set = new Set();
        this.waiters.set(streamId, set);
      }
      let settled = false;
      const finish = (result: Promise<LiveReadResult>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(streamId);
        result.then(resolve, reject);
      };
      const wake = (bell?: Doorbell | number) => {
        // The doorbell of the very next chunk carries it: no read needed (anything else — a gap, done, a reconnect — reads).
        if (bell && typeof bell === 'object' && bell.i === afterIndex + 1 && bell.d !== undefined) {
          finish(Promise.resolve({ chunks: [{ index: bell.i, data: bell.d }], done: false, expired: false }));
          return;
        }
        void this.readNow(streamId, afterIndex, options.limit).then(
          (r) => {
            if (ready(r)) finish(Promise.resolve(r));
          },
          (e: unknown) => finish(Promise.reject(e)),
        );
      };
      const timer = setTimeout(() => finish(this.readNow(streamId, afterIndex, options.limit)), options.blockMs);
      set.add(wake);
      // Close the race between the first read and registering the waiter.
      wake();
    });
  }

  async close(): Promise<void> {
    if (this.unsubscribe) await this.unsubscribe();
  }
}
