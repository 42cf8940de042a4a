import { Injectable } from '@nestjs/common';
import { WorkerRequestHandler } from '@core/lease';
import { type WorkspaceCaller, WorkspaceService, type WorkspaceSpec } from '@modules/workspaces';

type Json = Record<string, unknown>;

/**
 * Worker side of the workspace operations the api asks through WorkspaceOps (docs/design.md §2: only workers open a
 * workspace): a task's create-time workspace checks, a path made canonical, ephemeral workspaces removed. Patch apply and
 * revert are handled beside their api half, in PatchesService. Worker-only (TaskRunnersModule).
 */
@Injectable()
export class WorkspaceOpsWorker {
  constructor(private readonly workspaces: WorkspaceService) {}

  @WorkerRequestHandler('task.check')
  async check(args: Json): Promise<Json> {
    return { problems: await this.workspaces.problems(args.task as WorkspaceSpec, args.caller as WorkspaceCaller) };
  }

  @WorkerRequestHandler('workspace.canonical')
  async canonical(args: Json): Promise<Json> {
    return { path: await this.workspaces.canonical(String(args.path), { hostPaths: args.host_paths !== false }) };
  }

  @WorkerRequestHandler('workspace.remove')
  async remove(args: Json): Promise<Json> {
    return { removed: await this.workspaces.remove(args.paths as string[]) };
  }
}
