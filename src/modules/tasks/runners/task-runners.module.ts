import { Module } from '@nestjs/common';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { TasksModule } from '../tasks.module';
import { FileRunnerService } from './file-runner.service';
import { GitRunnerService } from './git-runner.service';
import { ShellRunnerService } from './shell-runner.service';
import { WorkspaceOpsWorker } from '../workspace/workspace-ops.worker';

/**
 * Worker-only: what runs tasks' tools — the shell, git and file runners, under the worker's command sandbox
 * (WorkspacesWorkerModule) — and the worker side of the workspace operations. The api role never builds it, so it never
 * spawns a process or opens a workspace.
 */
@Module({
  imports: [TasksModule, WorkspacesWorkerModule],
  providers: [ShellRunnerService, GitRunnerService, FileRunnerService, WorkspaceOpsWorker],
})
export class TaskRunnersModule {}
