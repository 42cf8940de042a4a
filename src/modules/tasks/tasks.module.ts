import { Module } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { DatabaseModule } from '@core/database/database.module';
import { SystemStat } from '@core/health/system-info.decorator';
import { ApprovalsModule } from '@modules/approvals';
import { EventsModule } from '@modules/events';
import { ExecutorRegistry } from './executor-registry.service';
import { FileExecutor } from './executors/file.executor';
import { GitExecutor } from './executors/git.executor';
import { ShellExecutor } from './executors/shell.executor';
import { PatchesService } from './patches.service';
import { RunEnqueuer } from './run-enqueuer.service';
import { RunExecutionService } from './run-execution.service';
import { RunAttemptsService } from './run-attempts.service';
import { RunInterventionsService } from './run-interventions.service';
import { RunQueriesService } from './run-queries.service';
import { RunReconcilerService } from './run-reconciler.service';
import { RunSnapshotsService } from './run-snapshots.service';
import { RunStreamService } from './run-stream.service';
import { RunWriterDeps } from './run-writer';
import { TaskArtifactEntity } from './task-artifact.entity';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunEntity } from './task-run.entity';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepEntity } from './task-step.entity';
import { TaskStepRepository } from './task-step.repository';
import { TaskEntity } from './task.entity';
import { TaskRepository } from './task.repository';
import { TaskRetention } from './task-retention';
import { TaskRunChainsService } from './task-run-chains.service';
import { TaskRemovalService } from './task-removal.service';
import { TasksService } from './tasks.service';
import { WorkspaceOps } from './workspace/workspace-ops';
import { WorkspacesModule } from '@modules/workspaces';

/**
 * Task runtime: tasks, runs leased to workers, steps, artifacts, patches, approvals gates,
 * recovery and retention. Exports the ExecutorRegistry (it finds agent_loop's @RunExecutorKind / @RunRunnerKind classes too), the
 * attempts, interventions and query services, and RunWriterDeps for executors; `task_runtime` of the system stats.
 */
@Module({
  imports: [DatabaseModule.forFeature([TaskEntity, TaskRunEntity, TaskStepEntity, TaskArtifactEntity]), EventsModule, ApprovalsModule, WorkspacesModule],
  providers: [
    TaskRepository,
    TaskRunRepository,
    TaskStepRepository,
    TaskArtifactRepository,
    ExecutorRegistry,
    WorkspaceOps,
    ShellExecutor,
    GitExecutor,
    FileExecutor,
    RunWriterDeps,
    RunEnqueuer,
    TasksService,
    TaskRemovalService,
    RunAttemptsService,
    RunInterventionsService,
    RunQueriesService,
    PatchesService,
    RunSnapshotsService,
    RunStreamService,
    RunExecutionService,
    RunReconcilerService,
    TaskRetention,
    TaskRunChainsService,
  ],
  exports: [
    TaskRunChainsService,
    ExecutorRegistry,
    TasksService,
    TaskRemovalService,
    RunAttemptsService,
    RunInterventionsService,
    RunQueriesService,
    PatchesService,
    RunExecutionService,
    RunStreamService,
    WorkspacesModule,
    WorkspaceOps,
  ],
})
export class TasksModule {
  constructor(
    private readonly runs: TaskRunRepository,
    private readonly execution: RunExecutionService,
    private readonly config: AppConfig,
  ) {}

  @SystemStat('task_runtime')
  async runtimeStats() {
    const [counts, facts] = await Promise.all([this.runs.statusCounts(), this.runs.queueFacts()]);
    return {
      runs_queued: counts.queued ?? 0,
      runs_running: counts.running ?? 0,
      runs_awaiting_approval: counts.awaiting_approval ?? 0,
      oldest_queued_age_ms: facts.oldestQueuedAgeMs,
      live_workers: facts.liveWorkers,
      local_running: this.execution.activeCount(),
      max_concurrent: this.config.tasks.maxConcurrent,
      lease_seconds: this.config.tasks.leaseSeconds,
      approval_policies: this.config.tasks.approvalPolicies,
    };
  }
}
