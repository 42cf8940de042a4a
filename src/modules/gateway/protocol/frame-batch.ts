import type { SseStream } from '@core/http/sse';

/**
 * The frames of one upstream chunk, written to the client in one socket write. A slow client pauses the upstream
 * (backpressure: `resume` once the socket drained), never buffers without bound.
 */
export class FrameBatch {
  private readonly frames: Buffer[] = [];
  /** Something was written (the deferred SSE head went out with it). */
  wrote = false;

  push(frame: Buffer | string): void {
    this.frames.push(typeof frame === 'string' ? Buffer.from(frame) : frame);
  }

  /** Writes what was pushed; false when the socket is full (the upstream is paused until it drains). */
  flush(res: SseStream, upstream: { resume(): void }, aborted: boolean): boolean {
    const frames = this.frames;
    if (frames.length === 0 || aborted) return true;
    const ok = res.relay(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    this.wrote = true;
    frames.length = 0;
    if (!ok) void res.drained().then(() => upstream.resume());
    return ok;
  }
}
