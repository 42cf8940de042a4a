import { Injectable } from '@nestjs/common';
import type { WorkerRequestTypes } from '@contracts/worker-requests';
import { noWorkerAnswered, WorkerRequests } from '@core/lease';

/**
 * What a worker may be asked to do with a workspace (kinds of the worker-request registry,
 * libs/contracts/src/worker-requests.ts); each kind's @WorkerRequestHandler is in WorkspaceOpsWorker (checks, canonical
 * paths, removal) or PatchesService (apply, revert).
 */
export type WorkspaceOpKind = Extract<keyof WorkerRequestTypes, 'task.check' | 'patch.apply' | 'patch.revert' | 'workspace.remove' | 'workspace.canonical'>;

/** How long the api waits for a worker to answer. */
const WAIT_MS = 60_000;

/**
 * Workspace operations run on workers (docs/design.md §2: the api never reads or writes a workspace; with a workspaces volume
 * only the workers mount it): each is a worker request (core/lease WorkerRequests) of its own kind, whose error the
 * api raises unchanged (a 409 stays a 409 with its details); 503 when no worker answers in 60 s.
 */
@Injectable()
export class WorkspaceOps {
  constructor(private readonly requests: WorkerRequests) {}

  /** api: runs `kind` on a worker and returns its result (or raises its error). */
  run<K extends WorkspaceOpKind>(tenantId: string, kind: K, args: WorkerRequestTypes[K]['payload']): Promise<WorkerRequestTypes[K]['answer']> {
    return this.requests.ask(tenantId, kind, args, {
      waitMs: WAIT_MS,
      noWorker: () =>
        noWorkerAnswered(`no worker answered the workspace operation ${kind} within ${WAIT_MS / 1000} s`, {
          userMessage: 'The workspace operation did not run.',
          details: { operation: kind },
        }),
    });
  }

  /** Retention: finished worker requests (of every kind) older than `olderThan`. */
  prune(olderThan: Date): Promise<number> {
    return this.requests.prune(olderThan);
  }
}
