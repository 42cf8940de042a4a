import { Module } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { SystemStat } from '@core/health/system-info.decorator';
import { EventPublisher } from './event-publisher.service';
import { EventStoreRepository } from './event-store.repository';
import { EventStore } from './event-store.service';
import { EventStreams } from './event-streams.service';
import { FeedStamper } from './feed-stamper.service';
import { sseCounters } from '@core/http/sse';

/**
 * Event store, public feed and SSE (docs/design.md §4.2–4.3). Exports EventStore (append in the caller's
 * transaction, publish after commit, read) and EventStreams (replay-then-tail sources and SSE); `sse` of the system stats.
 */
@Module({
  providers: [EventStoreRepository, EventPublisher, FeedStamper, EventStore, EventStreams],
  exports: [EventStore, EventStreams],
})
export class EventsModule {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly config: AppConfig,
  ) {}

  @SystemStat('sse')
  sseStats() {
    return {
      open_streams: sseCounters.open,
      opened_total: sseCounters.opened,
      slow_consumer_disconnects: sseCounters.slowConsumerDisconnects,
      largest_disconnect_backlog_bytes: sseCounters.largestDisconnectBacklogBytes,
      shutdown_closes: sseCounters.shutdownCloses,
      max_buffer_bytes: this.config.tasks.sse.maxBufferBytes,
      pending_doorbells: this.publisher.pendingCount(),
    };
  }
}
