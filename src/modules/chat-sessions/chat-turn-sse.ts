import type { SseStream } from '@core/http/sse';
import type { LiveResetFrame } from '@modules/inference';
import type { DeltaFrame } from './chat-delta-frames';

/** Receives a turn's progress: the SSE writer for `stream: true`, nothing otherwise. */
export interface TurnSink {
  created(data: Record<string, unknown>): void;
  delta(index: number, frame: DeltaFrame): void;
  /** A continuation answered anew (docs/takeover.md): the partial shown is discarded, the deltas after it are the reply. */
  reset(index: number, frame: LiveResetFrame): void;
  done(data: Record<string, unknown>): void;
  error(data: Record<string, unknown>): void;
}

/**
 * The SSE response of a turn (docs/api.md §3): `message.created`, `delta` frames whose `id:` is the chunk index
 * (the LiveStreamBuffer index, so a reader can resume from it), then `done` or `error`. A client that goes
 * away (or falls too far behind) stops receiving; the generation itself goes on (stop is not disconnect).
 */
export class TurnSseWriter implements TurnSink {
  constructor(private readonly sse: SseStream) {}

  created(data: Record<string, unknown>): void {
    this.sse.send({ event: 'message.created', data: JSON.stringify(data) });
  }

  delta(index: number, frame: DeltaFrame): void {
    this.sse.send({ id: index, event: 'delta', data: JSON.stringify({ index, ...frame }) });
  }

  reset(index: number, frame: LiveResetFrame): void {
    this.sse.send({ id: index, event: 'reset', data: JSON.stringify({ index, ...frame }) });
  }

  done(data: Record<string, unknown>): void {
    this.sse.send({ event: 'done', data: JSON.stringify(data) });
    this.sse.end();
  }

  error(data: Record<string, unknown>): void {
    this.sse.send({ event: 'error', data: JSON.stringify(data) });
    this.sse.end();
  }
}
