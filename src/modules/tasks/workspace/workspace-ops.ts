import { Injectable } from '@nestjs/common';
import { noWorkerAnswered, WorkerRequests, type WorkerRequestHandler } from '@core/lease';

type Json = Record<string, unknown>;

/** What a worker may be asked to do with a workspace (each kind has one handler, registered at module init). */
export type WorkspaceOpKind = 'task.check' | 'patch.apply' | 'patch.revert' | 'workspace.remove' | 'workspace.canonical';

export type WorkspaceOpHandler = (args: Json, ctx: { tenantId: string; signal: AbortSignal }) => Promise<Json>;

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

  register(kind: WorkspaceOpKind, handler: WorkspaceOpHandler): void {
    const run: WorkerRequestHandler = (args, ctx) => handler(args, { tenantId: ctx.tenantId, signal: ctx.signal });
    this.requests.register(kind, run);
  }

  /** api: runs `kind` on a worker and returns its result (or raises its error). */
  run(tenantId: string, kind: WorkspaceOpKind, args: Json): Promise<Json> {
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
