import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { DeltaFrame } from './chat-delta-frames';

/** Receives a turn's progress: the SSE writer for `stream: true`, nothing otherwise. */
export interface TurnSink {
  created(data: Record<string, unknown>): void;
  delta(index: number, frame: DeltaFrame): void;
  done(data: Record<string, unknown>): void;
  error(data: Record<string, unknown>): void;
}

/**
 * The SSE response of a turn (seed 002): `message.created`, `delta` frames whose `id:` is the chunk index
 * (the LiveStreamBuffer index, so a reader can resume from it), then `done` or `error`. A client that goes
 * away stops receiving; the generation itself goes on (stop is not disconnect).
 */
export class TurnSseWriter implements TurnSink {
  private readonly raw: ServerResponse;
  private readonly heartbeat: NodeJS.Timeout;
  private open = true;

  constructor(reply: FastifyReply, opts: { heartbeatMs: number; maxBufferBytes: number }) {
    reply.hijack();
    this.raw = reply.raw;
    const headers: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string | number | string[];
    this.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.raw.flushHeaders();
    this.raw.socket?.setNoDelay(true);
    this.raw.once('close', () => this.close());
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), opts.heartbeatMs);
    this.heartbeat.unref();
    this.maxBufferBytes = opts.maxBufferBytes;
  }

  private readonly maxBufferBytes: number;

  private write(text: string): void {
    if (!this.open) return;
    this.raw.write(text);
    // A consumer this far behind is dropped rather than buffered without bound; the generation goes on.
    if (this.raw.writableLength > this.maxBufferBytes) this.raw.destroy();
  }

  private event(name: string, data: unknown, id?: number): void {
    this.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  created(data: Record<string, unknown>): void {
    this.event('message.created', data);
  }

  delta(index: number, frame: DeltaFrame): void {
    this.event('delta', { index, ...frame }, index);
  }

  done(data: Record<string, unknown>): void {
    this.event('done', data);
    this.end();
  }

  error(data: Record<string, unknown>): void {
    this.event('error', data);
    this.end();
  }

  private end(): void {
    if (this.open) this.raw.end();
    this.close();
  }

  private close(): void {
    this.open = false;
    clearInterval(this.heartbeat);
  }
}
