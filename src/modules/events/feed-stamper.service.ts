import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { rootLogger } from '@core/logging/logger';
import { EventPublisher } from './event-publisher.service';
import { EventStoreRepository } from './event-store.repository';
import { busChannels, type FeedBatchMessage } from '@core/bus';
import { toEnvelope } from './event-envelope';

const BATCH = 500;
const SWEEP_MS = 1000;

/**
 * Stamps public-feed cursors on committed events (see EventStoreRepository.stamp) and rings the feed
 * doorbell with each stamped range. Writers kick it right after their commit; a 1 s sweep catches events
 * whose writer died between commit and stamp.
 */
@Injectable()
export class FeedStamper implements OnApplicationBootstrap, OnApplicationShutdown {
  private running: Promise<void> | undefined;
  private again = false;
  private sweep: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: EventStoreRepository,
    private readonly publisher: EventPublisher,
  ) {}

  onApplicationBootstrap(): void {
    this.sweep = setInterval(() => {
      if (this.running || this.stopped) return;
      this.store.hasUnstamped().then(
        (any) => any && this.kick(),
        () => undefined,
      );
    }, SWEEP_MS);
    this.sweep.unref();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.sweep);
  }

  /** Requests a stamp pass; concurrent kicks coalesce into at most one extra pass. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once no stamp pass is running or queued (no query of its own when the stamper is idle). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Resolves when every event committed before the call has a cursor (used by tests and retention). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    await this.stampAll();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.stampAll();
      } catch (err) {
        rootLogger().warn({ err: String(err) }, 'feed cursor stamping failed; the sweep retries');
        return;
      }
    } while (this.again && !this.stopped);
  }

  private async stampAll(): Promise<void> {
    for (;;) {
      const { from, to, rows } = await this.store.stamp(BATCH);
      if (rows.length === 0) return;
      const message: FeedBatchMessage = {
        from,
        to,
        events: rows.map((r) => ({ tenant_id: r.tenant_id, envelope: toEnvelope(r) })),
      };
      this.publisher.publish(busChannels.eventsFeed, message);
      if (rows.length < BATCH) return;
    }
  }
}
