import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { SystemStats } from '@contracts/api';
import { AppConfig } from '@core/config/app-config';
import { RunQueue } from '@core/queue/run-queue.port';
import { RedisConnections } from '@core/redis/redis-connections';
import { SystemInfoRegistry } from './system-info.registry';

export interface ReadinessCheck {
  status: 'up' | 'down';
  latency_ms?: number;
  message?: string;
}

export interface Readiness {
  status: 'ok' | 'error';
  checks: Record<string, ReadinessCheck>;
}

const timed = async (fn: () => Promise<unknown>, timeoutMs: number): Promise<ReadinessCheck> => {
  const started = performance.now();
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
    return { status: 'up', latency_ms: Math.round((performance.now() - started) * 100) / 100 };
  } catch (err) {
    return { status: 'down', message: err instanceof Error ? err.message : String(err) };
  }
};

/** Liveness, readiness and system stats, shared by the api routes and the worker's side port. */
@Injectable()
export class HealthService {
  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    @Inject(RunQueue) private readonly queue: RunQueue,
    private readonly registry: SystemInfoRegistry,
    @Optional() @Inject(RedisConnections) private readonly redis: RedisConnections | null,
  ) {}

  liveness() {
    return { status: 'ok', time: new Date().toISOString(), version: this.config.version, ...this.registry.livenessFields() };
  }

  async readiness(): Promise<Readiness> {
    const checks: Record<string, ReadinessCheck> = {};
    const [database, redis, queue] = await Promise.all([
      timed(() => this.dataSource.query('SELECT 1'), 2000),
      this.redis ? timed(() => this.redis!.command.ping(), 2000) : Promise.resolve(undefined),
      timed(() => this.queue.counts(), 2000),
    ]);
    checks.database = database;
    if (redis) checks.redis = redis;
    checks.queue = queue;
    const status = Object.values(checks).every((c) => c.status === 'up') ? 'ok' : 'error';
    return { status, checks };
  }

  async stats(): Promise<SystemStats> {
    const [counts, workers, extra] = await Promise.all([
      this.queue.counts().catch(() => ({})),
      this.queue.workerCount().catch(() => 0),
      this.registry.statsFields(),
    ]);
    const depth = Object.values(counts).reduce((sum, c) => sum + c.waiting + c.delayed, 0);
    return {
      queue_backend: this.queue.backend,
      queue_depth: depth,
      queue_counts: counts,
      workers,
      storage_backend: this.config.mode === 'scaled' ? 'postgres' : 'pglite',
      version: this.config.version,
      uptime_s: Math.round((Date.now() - this.config.startedAt.getTime()) / 1000),
      ...extra,
    };
  }
}
