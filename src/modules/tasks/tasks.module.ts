import { Module, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '@core/config/app-config';
import { DatabaseModule } from '@core/database/database.module';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
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
import { SavedAgents } from './saved-agents';
import { TaskRemovalService } from './task-removal.service';
import { TasksService } from './tasks.service';
import { WorkspaceOps } from './workspace/workspace-ops';
import { WorkspaceService, type WorkspaceCaller, WorkspacesModule, type WorkspaceSpec } from '@modules/workspaces';

/**
 * Task runtime: tasks, runs leased to workers, steps, artifacts, patches, approvals gates,
 * recovery and retention. Exports the ExecutorRegistry (it finds agent_loop's @RunExecutorKind / @RunRunnerKind classes too), the
 * attempts, interventions and query services, and RunWriterDeps for executors.
 */
@Module({
  imports: [
    DatabaseModule.forFeature([TaskEntity, TaskRunEntity, TaskStepEntity, TaskArtifactEntity]),
    EventsModule,
    ApprovalsModule,
    WorkspacesModule,
    DiscoveryModule,
  ],
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
    SavedAgents,
  ],
  exports: [
    TaskRunChainsService,
    SavedAgents,
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
export class TasksModule implements OnModuleInit {
  constructor(
    private readonly registry: SystemInfoRegistry,
    private readonly runs: TaskRunRepository,
    private readonly execution: RunExecutionService,
    private readonly config: AppConfig,
    private readonly ops: WorkspaceOps,
    private readonly workspaces: WorkspaceService,
  ) {}

  onModuleInit(): void {
    // Workspace operations a worker runs for the api (patch apply/revert register in PatchesService).
    this.ops.register('task.check', async (args) => ({
      problems: await this.workspaces.problems(args.task as WorkspaceSpec, args.caller as WorkspaceCaller),
    }));
    this.ops.register('workspace.canonical', async (args) => ({
      path: await this.workspaces.canonical(String(args.path), { hostPaths: args.host_paths !== false }),
    }));
    this.ops.register('workspace.remove', async (args) => ({ removed: await this.workspaces.remove(args.paths as string[]) }));
    this.registry.addStats('task_runtime', async () => {
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
    });
  }
}
