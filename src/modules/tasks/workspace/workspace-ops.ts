import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { JobPayloads } from '@contracts/jobs';
import { channelDoorbell } from '@core/bus/doorbell';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import { execSql } from '@core/database/sql';
import { DomainError, ServiceUnavailableError } from '@core/http/domain-error';
import { toDomainError } from '@core/http/error-rendering';
import { rootLogger } from '@core/logging/logger';
import type { JobContext } from '@core/queue/run-queue.port';
import { RunQueue } from '@core/queue/run-queue.port';
import { newId } from '../task-ids';

type Json = Record<string, unknown>;

/** What a worker may be asked to do with a workspace (each kind has one handler, registered at module init). */
export type WorkspaceOpKind = 'task.check' | 'patch.apply' | 'patch.revert' | 'workspace.remove' | 'workspace.canonical';

export type WorkspaceOpHandler = (args: Json, ctx: { tenantId: string; signal: AbortSignal }) => Promise<Json>;

/** The error an operation ended with, as the api will raise it again (the seed's envelope fields). */
interface StoredError {
  type: string;
  status: number;
  message: string;
  user_message: string;
  operator_action: string;
  details: Json;
}

interface OpRow {
  id: string;
  tenant_id: string;
  kind: WorkspaceOpKind;
  args: Json;
  status: 'queued' | 'running' | 'done' | 'failed';
  result: Json | null;
  error: StoredError | null;
}

/** How long the api waits for a worker to answer. */
const WAIT_MS = 60_000;
const opChannel = (id: string): string => `workspace.op.${id}`;

/**
 * Workspace operations run on workers (issue 18, DESIGN §2: the api never reads or writes a workspace; with a
 * workspaces volume only the workers mount it). The api writes an `workspace_ops` row, enqueues `workspace.op`, and
 * waits on the row (a doorbell after the worker's commit, a reread every 250 ms); the worker claims the row (a row
 * abandoned by a dead worker is claimed again after the run lease), runs the kind's handler and stores its result or
 * the error envelope it raised, which the api raises again unchanged (a 409 stays a 409 with its details).
 */
@Injectable()
export class WorkspaceOps {
  private readonly handlers = new Map<WorkspaceOpKind, WorkspaceOpHandler>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  register(kind: WorkspaceOpKind, handler: WorkspaceOpHandler): void {
    this.handlers.set(kind, handler);
  }

  /** api: runs `kind` on a worker and returns its result (or raises its error). 503 when no worker answers in time. */
  async run(tenantId: string, kind: WorkspaceOpKind, args: Json): Promise<Json> {
    const id = newId('wsop');
    await execSql(this.dataSource.manager, `INSERT INTO workspace_ops (id, tenant_id, kind, args) VALUES ($1, $2, $3, $4)`, [
      id,
      tenantId,
      kind,
      JSON.stringify(args),
    ]);
    const bell = await channelDoorbell(this.bus, opChannel(id));
    try {
      await this.queue.enqueue('workspace.op', { opId: id, tenantId }, { jobId: id });
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const row = await this.find(id);
        if (row?.status === 'done') return row.result ?? {};
        if (row?.status === 'failed' && row.error) {
          const e = row.error;
          throw new DomainError(e.type, e.status, e.message, { userMessage: e.user_message, operatorAction: e.operator_action, details: e.details });
        }
        if (Date.now() > deadline) break;
        await bell.next(250);
      }
    } finally {
      await bell.close();
    }
    throw new ServiceUnavailableError(`no worker answered the workspace operation ${kind} within ${WAIT_MS / 1000} s`, {
      userMessage: 'The workspace operation did not run.',
      operatorAction: 'Check that workers are running (GET /hecate/v1/system/stats, live_workers), then retry.',
      details: { operation: kind },
    });
  }

  /** worker: the `workspace.op` job. */
  async execute(payload: JobPayloads['workspace.op'], job: JobContext): Promise<void> {
    const staleMs = this.config.tasks.leaseSeconds * 1000;
    const { rows } = await execSql<OpRow>(
      this.dataSource.manager,
      `UPDATE workspace_ops SET status = 'running', updated_at = now()
        WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND updated_at < now() - ($2::bigint * interval '1 millisecond'))) RETURNING *`,
      [payload.opId, staleMs],
    );
    const op = rows[0];
    if (!op) return;
    let set: { status: 'done' | 'failed'; result: Json | null; error: StoredError | null };
    try {
      const handler = this.handlers.get(op.kind);
      if (!handler) throw new Error(`no handler for workspace operation ${op.kind} on this worker`);
      set = { status: 'done', result: await handler(op.args, { tenantId: op.tenant_id, signal: job.signal }), error: null };
    } catch (err) {
      const { domain, internal } = toDomainError(err);
      if (internal) rootLogger().error({ op_id: op.id, kind: op.kind, err: String(err) }, 'workspace operation failed');
      set = {
        status: 'failed',
        result: null,
        error: {
          type: domain.type,
          status: domain.status,
          message: domain.message,
          user_message: domain.userMessage,
          operator_action: domain.operatorAction,
          details: domain.details,
        },
      };
    }
    await execSql(this.dataSource.manager, `UPDATE workspace_ops SET status = $2, result = $3, error = $4, updated_at = now() WHERE id = $1`, [
      op.id,
      set.status,
      set.result === null ? null : JSON.stringify(set.result),
      set.error === null ? null : JSON.stringify(set.error),
    ]);
    await this.bus.publish(opChannel(op.id), { status: set.status }).catch(() => undefined);
  }

  private async find(id: string): Promise<OpRow | undefined> {
    const { rows } = await execSql<OpRow>(this.dataSource.manager, `SELECT * FROM workspace_ops WHERE id = $1`, [id]);
    return rows[0];
  }

  /** Retention: finished operations older than `olderThan`. */
  async prune(olderThan: Date): Promise<number> {
    const { affected } = await execSql(this.dataSource.manager, `DELETE FROM workspace_ops WHERE status IN ('done', 'failed') AND updated_at < $1`, [
      olderThan,
    ]);
    return affected;
  }
}
