import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { EventStore } from '@modules/events';
import { RetentionRunEntity } from './retention-run.entity';
import { RetentionRunRepository } from './retention-run.repository';
import { newId } from './task-ids';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunRepository } from './task-run.repository';
import { TaskRepository } from './task.repository';
import { WorkspaceOps } from './workspace/workspace-ops';

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
 * Retention of runs' events and artifacts (GATEWAY_RETENTION_RUN_EVENTS_* / _RUN_ARTIFACTS_*: max age
 * and max count), never touching active runs; also removes ephemeral workspaces of runs finished longer
 * ago than the artifact age. Sweeps on GATEWAY_RETENTION_INTERVAL when enabled, or on demand.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  /** Other modules' tables under retention (Agent Chat approvals): each reports what it deleted. */
  private readonly pruners = new Map<string, () => Promise<Record<string, unknown>>>();

  constructor(
    private readonly config: AppConfig,
    private readonly events: EventStore,
    private readonly runs: TaskRunRepository,
    private readonly tasks: TaskRepository,
    private readonly artifacts: TaskArtifactRepository,
    private readonly history: RetentionRunRepository,
    private readonly ops: WorkspaceOps,
  ) {}

  addPruner(name: string, prune: () => Promise<Record<string, unknown>>): void {
    this.pruners.set(name, prune);
  }

  onApplicationBootstrap(): void {
    if (!this.config.tasks.retention.enabled) return;
    this.timer = setInterval(() => void this.sweep('scheduled').catch(() => undefined), this.config.tasks.retention.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async sweep(trigger: 'scheduled' | 'manual') {
    const { runEvents, runArtifacts } = this.config.tasks.retention;
    const row: RetentionRunEntity = { id: newId('retention'), trigger, status: 'running', results: {}, error: '', startedAt: new Date(), finishedAt: null };
    await this.history.insert(row);
    try {
      await this.events.flushFeed();
      const protectedRunIds = await this.runs.activeIds();
      const now = Date.now();
      const deletedEvents = await this.events.prune({ olderThan: new Date(now - runEvents.maxAgeMs), keepNewest: runEvents.maxCount, protectedRunIds });
      const deletedArtifacts = await this.artifacts.prune({
        olderThan: new Date(now - runArtifacts.maxAgeMs),
        keepNewest: runArtifacts.maxCount,
        protectedRunIds,
      });
      // Removed on a worker, where the workspaces are (the api never opens one).
      const doomed: string[] = [];
      for (const run of await this.runs.finishedWorkspaces(new Date(now - runArtifacts.maxAgeMs), 500)) {
        const task = await this.tasks.find(run.tenantId, run.taskId);
        if (!task || task.workspaceMode === 'persistent' || task.workspaceMode === 'in_place' || !run.workspacePath) continue;
        doomed.push(run.workspacePath);
      }
      const removedWorkspaces = doomed.length > 0 ? Number((await this.ops.run('system', 'workspace.remove', { paths: doomed })).removed ?? 0) : 0;
      const deletedOps = await this.ops.prune(new Date(now - runArtifacts.maxAgeMs));
      const results = {
        run_events: { deleted: deletedEvents, max_age_ms: runEvents.maxAgeMs, max_count: runEvents.maxCount },
        run_artifacts: { deleted: deletedArtifacts, max_age_ms: runArtifacts.maxAgeMs, max_count: runArtifacts.maxCount },
        workspaces: { removed: removedWorkspaces },
        workspace_ops: { deleted: deletedOps },
      } as Record<string, unknown>;
      for (const [name, prune] of this.pruners) results[name] = await prune();
      await this.history.finish(row.id, { status: 'completed', results, error: '' });
      return toRetentionRunResponse({ ...row, status: 'completed', results, finishedAt: new Date() });
    } catch (err) {
      rootLogger().warn({ err: String(err) }, 'retention sweep failed');
      await this.history.finish(row.id, { status: 'failed', results: {}, error: String(err) }).catch(() => undefined);
      throw err;
    }
  }

  async list(limit = 50) {
    return (await this.history.list(Math.min(Math.max(limit, 1), 200))).map(toRetentionRunResponse);
  }
}
