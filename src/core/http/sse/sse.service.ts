import { Global, Injectable, Module, OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { SseAdmission, streamOwnerOf } from './sse-admission';
import { closeAllForShutdown, SseStream, SseStreamOptions } from './sse-stream';

/** Opens a stream that has not been opened yet: services get one of these, controllers build it from the reply. */
export type SseOpener = () => SseStream;

/**
 * Opens SSE streams with the configured heartbeat (GATEWAY_SSE_HEARTBEAT_INTERVAL) and slow-consumer bound
 * (GATEWAY_SSE_MAX_BUFFER_BYTES), and on shutdown ends every reconnectable stream with a reconnect hint, so open
 * clients do not hold the process past its grace period and resume on another api process.
 *
 * Readers — streams that answer a GET (events feed, run streams, Agent Chat session and active-session streams) —
 * count against GATEWAY_SSE_MAX_STREAMS_PER_KEY and GATEWAY_SSE_MAX_STREAMS; beyond either the request answers 429
 * `stream_limit_exceeded` with Retry-After before anything is streamed. A stream answering a POST (a chat turn, a /v1
 * call) is bound to the work that request started and ends with it: it does not count.
 */
@Injectable()
export class SseService implements OnModuleDestroy {
  private readonly admission: SseAdmission;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.admission = new SseAdmission({ perKey: config.tasks.sse.maxStreamsPerKey, total: config.tasks.sse.maxStreams });
  }

  /** `options.stream` names what the stream carries (the metrics' `stream` label); the rest default to the configuration. */
  open(reply: FastifyReply, options: Partial<SseStreamOptions> & Pick<SseStreamOptions, 'stream'>): SseStream {
    const release = reply.request.method === 'GET' ? this.admission.admit(streamOwnerOf(reply.request.hecate?.principal)) : undefined;
    try {
      const stream = new SseStream(
        reply,
        { heartbeatMs: this.config.tasks.sse.heartbeatMs, maxBufferBytes: this.config.tasks.sse.maxBufferBytes, ...options },
        this.metrics,
      );
      if (release) stream.signal.addEventListener('abort', release, { once: true });
      return stream;
    } catch (err) {
      release?.();
      throw err;
    }
  }

  opener(reply: FastifyReply, options: Partial<SseStreamOptions> & Pick<SseStreamOptions, 'stream'>): SseOpener {
    return () => this.open(reply, options);
  }

  onModuleDestroy(): void {
    const n = closeAllForShutdown();
    if (n > 0) rootLogger().info({ streams: n }, 'SSE streams ended with a reconnect hint (shutdown)');
  }
}

@Global()
@Module({ providers: [SseService], exports: [SseService] })
export class SseModule {}
