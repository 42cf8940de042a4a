import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RunQueue } from '@core/queue/run-queue.port';

/** Prometheus metrics of the process: HTTP durations by route and status, process metrics, queue job counts. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(@Inject(RunQueue) queue: RunQueue) {
    collectDefaultMetrics({ register: this.registry, prefix: 'hecate_' });
    this.httpDuration = new Histogram({
      name: 'hecate_http_request_duration_seconds',
      help: 'HTTP request duration by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    new Gauge({
      name: 'hecate_queue_jobs',
      help: 'Jobs by queue and state',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        try {
          const counts = await queue.counts();
          for (const [q, states] of Object.entries(counts)) {
            for (const [state, n] of Object.entries(states)) this.set({ queue: q, state }, n);
          }
        } catch {
          // Queue backend down: readiness reports it; metrics keep the last values.
        }
      },
    });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
