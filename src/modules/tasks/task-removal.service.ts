import { Injectable } from '@nestjs/common';
import { ApprovalsService } from '@modules/approvals';
import { EventStore } from '@modules/events';
import { WorkspaceService } from '@modules/workspaces';
import { TaskRunRepository } from './task-run.repository';
import { TaskRepository } from './task.repository';
import { TaskBusyError, TaskNotFoundError } from './tasks.errors';
import { WorkspaceOps } from './workspace/workspace-ops';

/** `DELETE /hecate/v1/tasks/{task_id}`: a task and everything it left behind. */
@Injectable()
export class TaskRemovalService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly runs: TaskRunRepository,
    private readonly events: EventStore,
    private readonly approvals: ApprovalsService,
    private readonly ops: WorkspaceOps,
    private readonly workspaces: WorkspaceService,
  ) {}

  /** 409 while a run is active; removes runs, steps, artifacts, approvals, events and workspaces. */
  async delete(tenantId: string, id: string): Promise<void> {
    await this.events.transaction(async ({ manager }) => {
      const task = await this.tasks.lock(manager, tenantId, id);
      if (!task) throw new TaskNotFoundError(id);
      const active = await this.runs.active(manager, tenantId, id);
      if (active) throw new TaskBusyError(id, active.id, active.status);
      const runIds = await this.runs.idsOfTask(manager, tenantId, id);
      await this.events.deleteForTask(manager, tenantId, id, runIds);
      await this.approvals.deleteForTask(manager, tenantId, id);
      await this.tasks.delete(manager, tenantId, id);
    }, null);
    await this.ops.run(tenantId, 'workspace.remove', { paths: [this.workspaces.taskDir(id)] });
  }
}
