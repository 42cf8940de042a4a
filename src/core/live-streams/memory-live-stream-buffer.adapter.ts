import { EventEmitter } from 'node:events';
import { LiveChunk, LiveReadOptions, LiveReadResult, LiveStreamBuffer } from './live-stream-buffer.port';

interface Ring {
  chunks: LiveChunk[];
  next: number;
  done: boolean;
  expiresAt: number;
}

/** In-memory ring for embedded mode. Oldest chunks drop past `maxChunks`; streams expire after `ttlMs`. */
export class MemoryLiveStreamBuffer extends LiveStreamBuffer {
  private readonly rings = new Map<string, Ring>();
  private readonly wake = new EventEmitter();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ttlMs: number,
    private readonly maxChunks = 100_000,
  ) {
    super();
    this.wake.setMaxListeners(0);
    this.sweeper = setInterval(() => this.sweep(), Math.min(ttlMs, 30_000));
    this.sweeper.unref();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, ring] of this.rings) if (ring.expiresAt <= now) this.rings.delete(id);
  }

  private live(streamId: string): Ring | undefined {
    const ring = this.rings.get(streamId);
    if (ring && ring.expiresAt <= Date.now()) {
      this.rings.delete(streamId);
      return undefined;
    }
    return ring;
  }

  async append(streamId: string, data: string): Promise<number> {
    let ring = this.live(streamId);
    if (!ring) {
      ring = { chunks: [], next: 1, done: false, expiresAt: 0 };
      this.rings.set(streamId, ring);
    }
    const index = ring.next++;
    ring.chunks.push({ index, data });
    if (ring.chunks.length > this.maxChunks) ring.chunks.splice(0, ring.chunks.length - this.maxChunks);
    ring.expiresAt = Date.now() + this.ttlMs;
    this.wake.emit(streamId);
    return index;
  }

  async read(streamId: string, afterIndex: number, options: LiveReadOptions = {}): Promise<LiveReadResult> {
    const collect = (): LiveReadResult | undefined => {
      const ring = this.live(streamId);
      if (!ring) return options.waitForStart && options.blockMs ? undefined : { chunks: [], done: false, expired: true };
      const chunks = ring.chunks.filter((c) => c.index > afterIndex).slice(0, options.limit ?? Infinity);
      const last = chunks.length > 0 ? chunks[chunks.length - 1].index : afterIndex;
      const done = ring.done && last >= ring.next - 1;
      if (chunks.length > 0 || done || !options.blockMs) return { chunks, done, expired: false };
      return undefined;
    };
    const first = collect();
    if (first) return first;
    return new Promise<LiveReadResult>((resolve) => {
      const onWake = () => {
        const result = collect();
        if (result) finish(result);
      };
      const timer = setTimeout(() => finish(collect() ?? { chunks: [], done: false, expired: !this.live(streamId) }), options.blockMs);
      const finish = (r: LiveReadResult) => {
        clearTimeout(timer);
        this.wake.off(streamId, onWake);
        resolve(r);
      };
      this.wake.on(streamId, onWake);
    });
  }

  async markDone(streamId: string): Promise<void> {
    const ring = this.live(streamId) ?? { chunks: [], next: 1, done: false, expiresAt: 0 };
    ring.done = true;
    ring.expiresAt = Date.now() + this.ttlMs;
    this.rings.set(streamId, ring);
    this.wake.emit(streamId);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.rings.clear();
  }
}
