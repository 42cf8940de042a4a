import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { randomHex } from '@core/context/random-hex';
import { rootLogger } from '@core/logging/logger';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { RetentionRunEntity } from './retention-run.entity';
import { RetentionRunRepository } from './retention-run.repository';
import { RetentionPruners } from './retention-pruners';

export const toRetentionRunResponse = (r: RetentionRunEntity) => ({
  id: r.id,
  trigger: r.trigger,
  status: r.status,
  results: r.results,
  error: r.error || undefined,
  started_at: r.startedAt.toISOString(),
  finished_at: r.finishedAt?.toISOString(),
});

/**
 * The retention sweep: every pruner declared with @RetentionPruner in this process (runs' events and artifacts,
 * ephemeral workspaces, workspace operations, stored responses, Agent Chat approvals…) in turn, each reporting what
 * it deleted under its name; the sweep and its results are kept in `retention_runs`. Sweeps on
 * GATEWAY_RETENTION_INTERVAL when enabled, or on demand.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly history: RetentionRunRepository,
    private readonly pruners: RetentionPruners,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.tasks.retention.enabled) return;
    const next = ignoreFailure('scheduled retention sweep', 'a pruner failure is logged at warn by the sweep; the next interval sweeps again');
    this.timer = setInterval(() => void this.sweep('scheduled').catch(next), this.config.tasks.retention.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async sweep(trigger: 'scheduled' | 'manual') {
    const row: RetentionRunEntity = {
      id: `retention_${randomHex(12)}`,
      trigger,
      status: 'running',
      results: {},
      error: '',
      startedAt: new Date(),
      finishedAt: null,
    };
    await this.history.insert(row);
    try {
      const results: Record<string, unknown> = {};
      for (const pruner of this.pruners.all()) results[pruner.name] = await pruner.prune();
      await this.history.finish(row.id, { status: 'completed', results, error: '' });
      return toRetentionRunResponse({ ...row, status: 'completed', results, finishedAt: new Date() });
    } catch (err) {
      rootLogger().warn({ err: String(err) }, 'retention sweep failed');
      await this.history
        .finish(row.id, { status: 'failed', results: {}, error: String(err) })
        .catch((e: unknown) =>
          rootLogger().warn({ retention_run_id: row.id, err: String(e) }, 'recording a failed retention run failed; its row stays running'),
        );
      throw err;
    }
  }

  async list(limit = 50) {
    return (await this.history.list(Math.min(Math.max(limit, 1), 200))).map(toRetentionRunResponse);
  }
}
