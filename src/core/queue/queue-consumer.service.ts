import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { QueueName } from '@contracts/jobs';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { JobDispatcher } from './job-dispatcher';
import { RunQueue } from './run-queue.port';

/** Worker role only: checks the job registry, consumes WORKER_QUEUES, drains on shutdown. */
@Injectable()
export class QueueConsumerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly config: AppConfig,
    private readonly dispatcher: JobDispatcher,
    @Inject(RunQueue) private readonly queue: RunQueue,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const queues = this.config.queue.workerQueues as QueueName[];
    this.dispatcher.discover(queues);
    await this.queue.consume(queues, this.config.queue.concurrency, this.dispatcher.dispatch);
    for (const q of queues) this.metrics.queueConsumed(q, this.config.queue.concurrency);
    rootLogger().info({ queues, concurrency: this.config.queue.concurrency, backend: this.queue.backend }, 'consuming queues');
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const q of this.config.queue.workerQueues) this.metrics.queueConsumed(q, 0);
    await this.queue.drain(this.config.server.shutdownGraceMs);
  }
}
