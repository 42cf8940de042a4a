import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { rootLogger } from '@core/logging/logger';

export interface SseOptions {
  heartbeatMs: number;
  /** Bytes queued towards a client beyond which it is a slow consumer and is disconnected. */
  maxBufferBytes: number;
}

export interface SseFrame {
  id?: string | number;
  event?: string;
  /** Already-serialised JSON (or text without newlines). */
  data: string;
}

/** Process-wide SSE counters for /hecate/v1/system/stats. */
export const sseCounters = { open: 0, opened: 0, slowConsumerDisconnects: 0, largestDisconnectBacklogBytes: 0 };

export const renderFrame = (f: SseFrame): string => `${f.id !== undefined ? `id: ${f.id}\n` : ''}${f.event ? `event: ${f.event}\n` : ''}data: ${f.data}\n\n`;

/**
 * One Server-Sent Events response: hijacks the Fastify reply, writes frames, sends a heartbeat comment,
 * and disconnects a client whose unread bytes exceed the bound (a slow consumer never grows memory or
 * blocks the producer). `closed` resolves when the client goes away or the stream is ended.
 */
export class SseConnection {
  private readonly raw: ServerResponse;
  private heartbeat: NodeJS.Timeout | undefined;
  private open = true;
  readonly closed: Promise<void>;
  /** Why the stream ended: the client left, the server ended it, or it was too slow. */
  endReason: 'client_closed' | 'ended' | 'slow_consumer' | undefined;

  constructor(
    reply: FastifyReply,
    private readonly options: SseOptions,
  ) {
    reply.hijack();
    this.raw = reply.raw;
    const headers: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string;
    this.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.raw.socket?.setNoDelay(true);
    sseCounters.open += 1;
    sseCounters.opened += 1;
    this.closed = new Promise<void>((resolve) => {
      this.raw.once('close', () => {
        if (this.open) this.endReason ??= 'client_closed';
        this.teardown();
        resolve();
      });
    });
    this.heartbeat = setInterval(() => this.comment('ping'), options.heartbeatMs);
    this.heartbeat.unref();
  }

  get isOpen(): boolean {
    return this.open;
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`);
  }

  send(frame: SseFrame): boolean {
    return this.write(renderFrame(frame));
  }

  /** Writes raw SSE text; false once the stream is closed. */
  write(text: string): boolean {
    if (!this.open) return false;
    this.raw.write(text);
    if (this.raw.writableLength > this.options.maxBufferBytes) {
      sseCounters.slowConsumerDisconnects += 1;
      sseCounters.largestDisconnectBacklogBytes = Math.max(sseCounters.largestDisconnectBacklogBytes, this.raw.writableLength);
      this.endReason = 'slow_consumer';
      this.teardown();
      this.raw.destroy();
      return false;
    }
    return true;
  }

  end(): void {
    if (!this.open) return;
    this.endReason = 'ended';
    this.teardown();
    this.raw.end();
  }

  private teardown(): void {
    if (!this.open) return;
    this.open = false;
    sseCounters.open -= 1;
    clearInterval(this.heartbeat);
  }
}

/** A stream that cannot continue (database unreachable…): tell the client, which reconnects with its cursor. */
export function sseFailure(sse: SseConnection, err: unknown): void {
  rootLogger().warn({ err: err instanceof Error ? err.message : String(err) }, 'SSE stream failed; client will resume');
  sse.send({ event: 'error', data: JSON.stringify({ error: { type: 'service_unavailable', message: 'stream interrupted; reconnect with Last-Event-ID' } }) });
}
