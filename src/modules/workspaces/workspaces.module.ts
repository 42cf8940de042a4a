import { Module } from '@nestjs/common';
import { COMMAND_SANDBOX } from './command-sandbox';
import { SandboxService } from './sandbox/sandbox.service';
import { WorkspaceService } from './workspace/workspace.service';

/**
 * Workspaces for both roles: where a run's workspace is, whether a task's workspace settings hold. Preparing,
 * cloning and removing one happen on a worker (the api asks one through a workspace operation).
 */
@Module({
  providers: [WorkspaceService],
  exports: [WorkspaceService],
})
export class WorkspacesModule {}

/**
 * Worker-only: the command sandbox (bubblewrap, the egress proxy, limits), handed out as COMMAND_SANDBOX, and the
 * `sandbox` field of the worker's /healthz (SandboxService.describe). The api role never builds it, so it never probes
 * bubblewrap or spawns a process.
 */
@Module({
  imports: [WorkspacesModule],
  providers: [SandboxService, { provide: COMMAND_SANDBOX, useExisting: SandboxService }],
  exports: [COMMAND_SANDBOX, WorkspacesModule],
})
export class WorkspacesWorkerModule {}
