import { Injectable } from '@nestjs/common';
import { stat } from 'node:fs/promises';
import type { RequestOrigin } from '@core/context/request-context';
import { WorkerRequestHandler, type WorkerRequestContext } from '@core/lease';
import { EventStore } from '@modules/events';
import { toPatchResponse } from './task-run.dto';
import type { PatchMetadata, TaskArtifactEntity } from './task-artifact.entity';
import { TaskArtifactRepository } from './task-artifact.repository';
import { RunQueriesService } from './run-queries.service';
import { ArtifactNotFoundError, PatchConflictError } from './tasks.errors';
import { readCurrent, resolveInside, writeCurrent } from '@modules/workspaces';
import { WorkspaceOps } from './workspace/workspace-ops';

type PatchAction = 'apply' | 'revert';
type PatchOp = { taskId: string; runId: string; artifactId: string; origin: RequestOrigin | null };

/**
 * Patch review (docs/api.md §4 `patches`): apply writes a proposed patch's after-content only when the file
 * still has the captured before-content; revert restores the before-content only when the file still has
 * the after-content. Drift answers 409; the artifact row is locked for the decision. Both run on a worker (a
 * workspace operation, a worker request the api waits for): the workspace is there, never on the api.
 */
@Injectable()
export class PatchesService {
  constructor(
    private readonly queries: RunQueriesService,
    private readonly artifacts: TaskArtifactRepository,
    private readonly events: EventStore,
    private readonly ops: WorkspaceOps,
  ) {}

  apply(tenantId: string, taskId: string, runId: string, artifactId: string, origin: RequestOrigin | null) {
    return this.onWorker(tenantId, 'apply', { taskId, runId, artifactId, origin });
  }

  revert(tenantId: string, taskId: string, runId: string, artifactId: string, origin: RequestOrigin | null) {
    return this.onWorker(tenantId, 'revert', { taskId, runId, artifactId, origin });
  }

  /** Worker side of `apply` (the `patch.apply` workspace operation). */
  @WorkerRequestHandler('patch.apply')
  applyOnWorker(op: PatchOp, { tenantId }: WorkerRequestContext) {
    return this.transition(tenantId, op.taskId, op.runId, op.artifactId, 'apply', op.origin);
  }

  /** Worker side of `revert` (the `patch.revert` workspace operation). */
  @WorkerRequestHandler('patch.revert')
  revertOnWorker(op: PatchOp, { tenantId }: WorkerRequestContext) {
    return this.transition(tenantId, op.taskId, op.runId, op.artifactId, 'revert', op.origin);
  }

  private async onWorker(tenantId: string, action: PatchAction, op: PatchOp): Promise<ReturnType<typeof toPatchResponse>> {
    // The run must be this tenant's before anything is queued (404 at once, not from a worker).
    await this.queries.requireRun(tenantId, op.taskId, op.runId);
    const origin = op.origin ? { requestId: op.origin.requestId, traceId: op.origin.traceId } : null;
    // The worker's answer is the patch response it rendered, as JSON.
    return (await this.ops.run(tenantId, `patch.${action}`, { ...op, origin })) as unknown as ReturnType<typeof toPatchResponse>;
  }

  private async transition(tenantId: string, taskId: string, runId: string, artifactId: string, action: 'apply' | 'revert', origin: RequestOrigin | null) {
    const run = await this.queries.requireRun(tenantId, taskId, runId);
    const updated = await this.events.transaction(async (tx) => {
      const artifact = await this.artifacts.lock(tx.manager, tenantId, runId, artifactId);
      if (!artifact || artifact.kind !== 'patch') throw new ArtifactNotFoundError(artifactId);
      const meta = artifact.metadata as unknown as PatchMetadata;
      const needed = action === 'apply' ? 'proposed' : 'applied';
      if (artifact.status !== needed) {
        throw new PatchConflictError(`patch ${artifactId} is ${artifact.status}; ${action} needs a ${needed} patch`, {
          artifact_id: artifactId,
          artifact_status: artifact.status,
        });
      }
      try {
        if (!(await stat(run.workspacePath)).isDirectory()) throw new Error('not a directory');
      } catch {
        throw new PatchConflictError(`the workspace of run ${runId} no longer exists`, { artifact_id: artifactId, workspace_path: run.workspacePath });
      }
      const target = await resolveInside(run.workspacePath, meta.path, 'patch path');
      const current = await readCurrent(run.workspacePath, target);
      const expected = action === 'apply' ? (meta.before_existed ? meta.before_content : null) : meta.after_exists ? meta.after_content : null;
      if (current !== expected) {
        throw new PatchConflictError(`${meta.path} changed since the patch was captured; refusing to ${action}`, {
          artifact_id: artifactId,
          path: meta.path,
          expected: expected === null ? 'absent' : 'captured content',
          found: current === null ? 'absent' : 'different content',
        });
      }
      const next = action === 'apply' ? (meta.after_exists ? meta.after_content : null) : meta.before_existed ? meta.before_content : null;
      await writeCurrent(run.workspacePath, target, next);
      const status = action === 'apply' ? 'applied' : 'reverted';
      await this.artifacts.setStatus(tx.manager, artifact.id, status);
      await tx.emit({
        tenantId,
        runId,
        taskId,
        type: action === 'apply' ? 'tool.file.applied' : 'tool.file.reverted',
        data: { artifact_id: artifact.id, path: meta.path, operation: meta.operation, before_existed: meta.before_existed, artifact_status: status },
      });
      return { ...artifact, status } as TaskArtifactEntity;
    }, origin);
    return toPatchResponse(updated);
  }
}
