import { HttpException, Inject, Injectable, Optional } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import type { SystemStats } from '@contracts/api';
import { AppConfig } from '@core/config/app-config';
import { RunQueue } from '@core/queue/run-queue.port';
import { RedisConnections } from '@core/redis/redis-connections';
import { SystemInfoRegistry } from './system-info.registry';

export type Readiness = HealthCheckResult;

/** Liveness, readiness and system stats, shared by the api routes and the worker's side port. */
@Injectable()
export class HealthService {
  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    @Inject(RunQueue) private readonly queue: RunQueue,
    private readonly registry: SystemInfoRegistry,
    private readonly terminus: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Optional() @Inject(RedisConnections) private readonly redis: RedisConnections | null,
  ) {}

  liveness() {
    return { status: 'ok', time: new Date().toISOString(), version: this.config.version, ...this.registry.livenessFields() };
  }

  /** Terminus checks: database, Redis (scaled mode) and the queue backend, each with a 2 s budget. */
  async readiness(): Promise<Readiness> {
    const check = (key: string, fn: () => Promise<unknown>) => () =>
      this.indicators
        .check(key)
        .attempt(async () => void (await fn()))
        .withTimeout(2000);
    const checks = [check('database', () => this.dataSource.query('SELECT 1')), check('queue', () => this.queue.ping().then(() => this.queue.counts()))];
    const redis = this.redis;
    if (redis) checks.push(check('redis', () => redis.command.ping()));
    try {
      return await this.terminus.check(checks);
    } catch (err) {
      // Terminus reports a failed check as a 503 exception whose body is the full result.
      if (err instanceof HttpException) return err.getResponse() as Readiness;
      throw err;
    }
  }

  async stats(): Promise<SystemStats> {
    // The stats show what can be read; an unreachable queue reads as empty (readiness reports it down).
    const [counts, workers, capacity, extra] = await Promise.all([
      this.queue.counts().catch(() => ({})),
      this.queue.workerCount().catch(() => 0),
      this.queue.capacity().catch(() => ({})),
      this.registry.statsFields(),
    ]);
    const depth = Object.values(counts).reduce((sum, c) => sum + c.waiting + c.delayed, 0);
    return {
      queue_backend: this.queue.backend,
      queue_depth: depth,
      queue_counts: counts,
      queue_capacity: capacity,
      workers,
      storage_backend: this.config.mode === 'scaled' ? 'postgres' : 'pglite',
      version: this.config.version,
      uptime_s: Math.round((Date.now() - this.config.startedAt.getTime()) / 1000),
      ...extra,
    };
  }
}
