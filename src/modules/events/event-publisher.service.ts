import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { type BusChannel, EventBus } from '@core/bus';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';

const MAX_PENDING = 10_000;

/**
 * Publishes doorbells after commit (docs/design.md §4.3). A publish that fails (Redis restarting) is kept, in
 * order, and retried with backoff, so subscribers get the doorbell once the bus is back instead of
 * waiting for the next event to reveal the gap. Bounded: beyond MAX_PENDING the oldest are dropped —
 * subscribers still refill from Postgres on reconnect and on sequence gaps.
 */
@Injectable()
export class EventPublisher implements OnApplicationShutdown {
  private readonly pending: { channel: string; message: unknown; committedAt?: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;
  private backoffMs = 50;
  private closed = false;

  constructor(
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

  /** `committedAt` (performance.now() just after the commit): the publication is timed in hecate_event_publish_lag_seconds. */
  publish<P>(to: BusChannel<P>, message: P, committedAt?: number): void {
    if (this.closed) return;
    const channel = to.name;
    if (this.pending.length === 0 && !this.flushing) {
      this.bus.publish(channel, message).then(
        () => this.published(committedAt),
        (err: unknown) => {
          this.enqueue(channel, message, committedAt);
          rootLogger().warn({ channel, err: String(err) }, 'event doorbell publish failed; will retry');
        },
      );
      return;
    }
    this.enqueue(channel, message, committedAt);
  }

  private published(committedAt: number | undefined): void {
    if (committedAt !== undefined) this.metrics.eventsPublished((performance.now() - committedAt) / 1000);
  }

  private enqueue(channel: string, message: unknown, committedAt: number | undefined): void {
    this.pending.push({ channel, message, committedAt });
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.backoffMs);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const next = this.pending[0];
        await this.bus.publish(next.channel, next.message);
        this.pending.shift();
        this.published(next.committedAt);
      }
      this.backoffMs = 50;
    } catch {
      this.backoffMs = Math.min(this.backoffMs * 2, 2000);
      this.schedule();
    } finally {
      this.flushing = false;
    }
  }

  pendingCount(): number {
    return this.pending.length;
  }

  onApplicationShutdown(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
