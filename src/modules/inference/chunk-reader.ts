import type { Readable } from 'node:stream';

const HIGH_WATER = 32;

/**
 * Reads an upstream body from its 'data' events: `next()` for pull consumers (translation, the router's stream
 * API) and `pump()` for the passthrough relay, which handles each chunk synchronously in the event (no promise
 * per chunk). Cheaper per chunk than a Readable's async iterator on the hot streaming path.
 */
export class ChunkReader {
  private readonly queue: Buffer[] = [];
  private ended = false;
  private failure: unknown;
  private waiter: { resolve: (c: Buffer | undefined) => void; reject: (e: unknown) => void } | undefined;
  private sink: ((chunk: Buffer) => boolean) | undefined;
  private settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;

  constructor(private readonly body: Readable) {
    body.on('data', (chunk: Buffer) => this.push(chunk));
    body.once('end', () => {
      this.ended = true;
      this.wake();
    });
    body.once('error', (err: unknown) => {
      this.failure = err;
      this.wake();
    });
    body.once('close', () => {
      if (!this.ended && this.failure === undefined) this.failure = Object.assign(new Error('upstream body closed early'), { code: 'UND_ERR_SOCKET' });
      this.wake();
    });
  }

  private push(chunk: Buffer): void {
    if (this.sink) {
      if (!this.sink(chunk)) this.body.pause();
      return;
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(chunk);
      return;
    }
    this.queue.push(chunk);
    if (this.queue.length >= HIGH_WATER) this.body.pause();
  }

  /** Settles a pending consumer once the body is over (ended or failed) and nothing is queued. */
  private wake(): void {
    if (!this.ended && this.failure === undefined) return;
    if (this.waiter && this.queue.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.failure !== undefined) w.reject(this.failure);
      else w.resolve(undefined);
    }
    if (this.settle && this.queue.length === 0) {
      const s = this.settle;
      this.settle = undefined;
      if (this.failure !== undefined) s.reject(this.failure);
      else s.resolve();
    }
  }

  /** The next chunk, or undefined at the end; rejects when the body failed. */
  next(): Promise<Buffer | undefined> {
    const chunk = this.queue.shift();
    if (chunk) {
      if (this.queue.length < HIGH_WATER / 2 && this.body.isPaused()) this.body.resume();
      return Promise.resolve(chunk);
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /**
   * Hands every remaining chunk to `sink` as it arrives; `sink` returning false pauses the body until
   * `resume()`. Resolves at the end, rejects when the body fails.
   */
  pump(sink: (chunk: Buffer) => boolean): Promise<void> {
    this.sink = sink;
    let flowing = true;
    while (this.queue.length > 0 && flowing) flowing = sink(this.queue.shift() as Buffer);
    const done = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    if (flowing) this.body.resume();
    else this.body.pause();
    this.wake();
    return done;
  }

  resume(): void {
    this.body.resume();
  }

  destroy(): void {
    this.body.destroy();
  }
}
