import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { rootLogger } from '@core/logging/logger';
import type { MetricsService, SseStreamKind } from '@core/metrics/metrics.service';
import { recordStreamOpened } from '../http-metrics';

export interface SseStreamOptions {
  /** What the stream carries (the `stream` label of the SSE metrics). */
  stream: SseStreamKind;
  /** Heartbeat comment interval; 0 = none (the /v1 relays speak their provider's protocol and send none). */
  heartbeatMs: number;
  /** Bytes queued towards the client beyond which it is a slow consumer and is disconnected. */
  maxBufferBytes: number;
  /** Extra response headers (e.g. the /v1 route headers). */
  headers?: Record<string, string>;
  /**
   * Ended with a reconnect hint when the process shuts down (default true). The /v1 relays are not: their clients
   * cannot resume, so they run to their end within the shutdown grace.
   */
  reconnectable?: boolean;
  /**
   * Leave the response head unsent until the first write, so head and first bytes go out in one socket write
   * (the /v1 relays' time to first token); `flushHead()` sends it alone when the first chunk yields nothing.
   */
  deferHead?: boolean;
  /**
   * Another line-oriented stream through the same writer (bound, metrics, client-gone signal): e.g. NDJSON as
   * `text/plain; charset=utf-8`, written with `write()`. Such a stream must not be `reconnectable` (its shutdown frame is SSE).
   */
  contentType?: string;
}

export interface SseFrame {
  id?: string | number;
  event?: string;
  /** Already-serialised JSON (or text without newlines). */
  data: string;
}

/** Process-wide SSE counters for /hecate/v1/system/stats and /metrics. */
export const sseCounters = { open: 0, opened: 0, slowConsumerDisconnects: 0, largestDisconnectBacklogBytes: 0, shutdownCloses: 0 };

export const renderFrame = (f: SseFrame): string => `${f.id !== undefined ? `id: ${f.id}\n` : ''}${f.event ? `event: ${f.event}\n` : ''}data: ${f.data}\n\n`;

/** A paced replay's client that takes no byte for this long is a slow consumer (SseStream.paced). */
export const PACE_STALL_MS = 30_000;

/** How long a client waits before reconnecting after a shutdown close (the `retry:` field). */
export const SHUTDOWN_RETRY_MS = 1000;

const open = new Set<SseStream>();

/**
 * One Server-Sent Events response — the one writer every stream uses (docs/style.md rule 15): hijacks the Fastify reply,
 * writes frames, comments or pre-framed bytes, sends heartbeat comments, disconnects a client whose unread bytes
 * exceed the bound (a slow consumer never grows memory or blocks the producer), reports the client leaving through
 * `closed` / `signal`, and is ended with a reconnect hint when the process shuts down.
 */
export class SseStream {
  private readonly raw: ServerResponse;
  private heartbeat: NodeJS.Timeout | undefined;
  private isOpenFlag = true;
  /** The client's resume point before any frame with an id went out (see `startAt`). */
  private startCursor: string | undefined;
  private idSent = false;
  private readonly abort = new AbortController();
  readonly closed: Promise<void>;
  /** Why the stream ended: the client left, the server ended it, it was too slow, or the process shut down. */
  endReason: 'client_closed' | 'ended' | 'slow_consumer' | 'shutdown' | undefined;

  constructor(
    reply: FastifyReply,
    private readonly options: SseStreamOptions,
    private readonly metrics?: MetricsService,
  ) {
    reply.hijack();
    this.raw = reply.raw;
    const headers: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string;
    this.raw.writeHead(200, {
      ...headers,
      ...options.headers,
      'content-type': options.contentType ?? 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // No explicit `connection: keep-alive`: Node sends it, and an explicit one would override `Connection: close`
      // while the server shuts down.
      'x-accel-buffering': 'no',
    });
    this.raw.socket?.setNoDelay(true);
    if (!options.deferHead) this.raw.flushHeaders();
    sseCounters.open += 1;
    sseCounters.opened += 1;
    open.add(this);
    if (metrics) {
      recordStreamOpened(metrics, reply);
      metrics.sseOpened(options.stream);
    }
    this.closed = new Promise<void>((resolve) => {
      this.raw.once('close', () => {
        if (this.isOpenFlag) this.endReason ??= 'client_closed';
        this.teardown();
        resolve();
      });
    });
    if (options.heartbeatMs > 0) {
      // Bytes still queued mean the connection is not idle: a ping then would only count against a paced write's backlog.
      this.heartbeat = setInterval(() => this.raw.writableLength === 0 && this.comment('ping'), options.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  get isOpen(): boolean {
    return this.isOpenFlag;
  }

  /** Aborted when the stream ends for any reason (client gone, ended, too slow, shutdown). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The underlying response, for `res.writableFinished` style checks by relays. */
  get response(): ServerResponse {
    return this.raw;
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`);
  }

  send(frame: SseFrame): boolean {
    if (frame.id !== undefined) this.idSent = true;
    return this.write(renderFrame(frame));
  }

  /**
   * Where a client resumes when this stream ends before it sent any frame with an id: a shutdown's reconnect frame
   * then carries it (`id:` sets Last-Event-ID), so the client resumes this stream's work, not whatever comes next.
   */
  startAt(cursor: string): void {
    this.startCursor = cursor;
  }

  /** Counts frames this stream served from the event store rather than live (a replay after a cursor, a refill). */
  replayed(frames: number): void {
    if (frames > 0) this.metrics?.sseReplayed(this.options.stream, frames);
  }

  /**
   * Writes SSE text or pre-framed bytes. False once the stream is closed, or when this write made the client a
   * slow consumer (it is then disconnected).
   */
  write(chunk: string | Buffer): boolean {
    if (!this.isOpenFlag) return false;
    this.raw.write(chunk);
    if (this.raw.writableLength > this.options.maxBufferBytes) {
      this.slowConsumer();
      return false;
    }
    return true;
  }

  private slowConsumer(): void {
    sseCounters.slowConsumerDisconnects += 1;
    sseCounters.largestDisconnectBacklogBytes = Math.max(sseCounters.largestDisconnectBacklogBytes, this.raw.writableLength);
    this.endReason = 'slow_consumer';
    this.teardown();
    this.raw.destroy();
  }

  /**
   * A relay's write: the bytes go out and the answer is the socket's backpressure (false: wait for `drained()`
   * before reading more from the upstream), never a disconnect.
   */
  relay(chunk: string | Buffer): boolean {
    if (!this.isOpenFlag) return false;
    return this.raw.write(chunk);
  }

  /**
   * A write at the client's pace, for the history it asked to be replayed: while the socket is full it waits for the
   * client to read rather than counting it slow (one page is held meanwhile). A client that takes no byte for
   * PACE_STALL_MS is a slow consumer all the same and is disconnected. False once the stream is closed.
   */
  async paced(chunk: string | Buffer): Promise<boolean> {
    if (this.relay(chunk)) return this.isOpenFlag;
    let queued = this.raw.writableLength;
    while (this.isOpenFlag && !(await this.drainedWithin(PACE_STALL_MS))) {
      if (this.raw.writableLength >= queued) {
        this.slowConsumer();
        return false;
      }
      queued = this.raw.writableLength;
    }
    return this.isOpenFlag;
  }

  /** True when the response drained (or is gone) within `ms`. */
  private drainedWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.raw.off('drain', onDrain);
        this.raw.off('close', onDrain);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const timer = setTimeout(done, ms, false);
      this.raw.once('drain', onDrain);
      this.raw.once('close', onDrain);
    });
  }

  /** Resolves when a response that refused a write can take more, or is gone. */
  drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.once('drain', done);
      this.raw.once('close', done);
    });
  }

  /** Sends the response head now (a deferred head whose first chunk produced nothing to send). */
  flushHead(): void {
    this.raw.flushHeaders();
  }

  end(last?: string | Buffer): void {
    if (!this.isOpenFlag) return;
    this.endReason = 'ended';
    this.teardown();
    if (last !== undefined) this.raw.end(last);
    else this.raw.end();
  }

  /** Shutdown: a reconnectable stream gets `retry:` and an `event: reconnect` frame, then ends. */
  closeForShutdown(): boolean {
    if (!this.isOpenFlag || this.options.reconnectable === false) return false;
    const id = this.startCursor !== undefined && !this.idSent ? `id: ${this.startCursor}\n` : '';
    this.raw.write(`${id}retry: ${SHUTDOWN_RETRY_MS}\nevent: reconnect\ndata: {"reason":"server_shutdown"}\n\n`);
    this.endReason = 'shutdown';
    sseCounters.shutdownCloses += 1;
    this.teardown();
    this.raw.end();
    return true;
  }

  private teardown(): void {
    if (!this.isOpenFlag) return;
    this.isOpenFlag = false;
    sseCounters.open -= 1;
    open.delete(this);
    this.metrics?.sseClosed(this.options.stream, this.endReason === 'slow_consumer');
    clearInterval(this.heartbeat);
    this.abort.abort();
  }
}

/** Ends every open reconnectable stream with a reconnect hint (process shutdown); answers how many. */
export function closeAllForShutdown(): number {
  let n = 0;
  for (const s of [...open]) if (s.closeForShutdown()) n++;
  return n;
}

/** A stream that cannot continue (database unreachable…): tell the client, which reconnects with its cursor. */
export function sseFailure(sse: SseStream, err: unknown): void {
  rootLogger().warn({ err: err instanceof Error ? err.message : String(err) }, 'SSE stream failed; client will resume');
  sse.send({ event: 'error', data: JSON.stringify({ error: { type: 'service_unavailable', message: 'stream interrupted; reconnect with Last-Event-ID' } }) });
}
