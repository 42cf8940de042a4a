import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { EventStore } from '@modules/events';
import { RetentionPruner } from '@modules/retention';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunRepository } from './task-run.repository';
import { TaskRepository } from './task.repository';
import { WorkspaceOps } from './workspace/workspace-ops';

/**
 * The tasks module's tables under retention (GATEWAY_RETENTION_RUN_EVENTS_* / _RUN_ARTIFACTS_*: max age and max
 * count), never touching active runs; also the ephemeral workspaces of runs finished longer ago than the artifact
 * age, and finished workspace operations as old.
 */
@Injectable()
export class TaskRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly events: EventStore,
    private readonly runs: TaskRunRepository,
    private readonly tasks: TaskRepository,
    private readonly artifacts: TaskArtifactRepository,
    private readonly ops: WorkspaceOps,
  ) {}

  @RetentionPruner('run_events')
  async runEvents() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.runEvents;
    // Every event committed so far has its cursor before any is deleted.
    await this.events.flushFeed();
    const protectedRunIds = await this.runs.activeIds();
    const deleted = await this.events.prune({ olderThan: new Date(Date.now() - maxAgeMs), keepNewest: maxCount, protectedRunIds });
    return { deleted, max_age_ms: maxAgeMs, max_count: maxCount };
  }

  @RetentionPruner('run_artifacts')
  async runArtifacts() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.runArtifacts;
    const protectedRunIds = await this.runs.activeIds();
    const deleted = await this.artifacts.prune({ olderThan: new Date(Date.now() - maxAgeMs), keepNewest: maxCount, protectedRunIds });
    return { deleted, max_age_ms: maxAgeMs, max_count: maxCount };
  }

  @RetentionPruner('workspaces')
  async workspaces() {
    const before = new Date(Date.now() - this.config.tasks.retention.runArtifacts.maxAgeMs);
    const doomed: string[] = [];
    for (const run of await this.runs.finishedWorkspaces(before, 500)) {
      const task = await this.tasks.find(run.tenantId, run.taskId);
      if (!task || task.workspaceMode === 'persistent' || task.workspaceMode === 'in_place' || !run.workspacePath) continue;
      doomed.push(run.workspacePath);
    }
    // Removed on a worker, where the workspaces are (the api never opens one).
    const removed = doomed.length > 0 ? Number((await this.ops.run('system', 'workspace.remove', { paths: doomed })).removed ?? 0) : 0;
    return { removed };
  }

  @RetentionPruner('workspace_ops')
  async workspaceOps() {
    return { deleted: await this.ops.prune(new Date(Date.now() - this.config.tasks.retention.runArtifacts.maxAgeMs)) };
  }
}
