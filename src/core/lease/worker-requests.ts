import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { JobPayloads } from '@contracts/jobs';
import type { WorkerRequestTypes } from '@contracts/worker-requests';
import { channelDoorbell } from '@core/bus/doorbell';
import { busChannels } from '@core/bus/channels';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import { execSql } from '@core/database/sql';
import type { DomainError } from '@core/http/domain-error';
import { fromErrorEnvelope, toErrorEnvelope, type LosslessErrorEnvelope } from '@core/http/error-envelope';
import { toDomainError } from '@core/http/error-rendering';
import { rootLogger } from '@core/logging/logger';
import { RunQueue, type JobContext } from '@core/queue/run-queue.port';
import { keepLease, Lease, LEASE_OWNER, newLeaseToken } from './lease';

type Json = Record<string, unknown>;

/** Bus channels of worker requests, by name (declared in the registry, core/bus/channels.ts). */
export const WORKER_REQUEST_CHANNELS = {
  request: (id: string): string => busChannels.workerRequest.of(id).name,
  input: (id: string, token: string): string => busChannels.workerRequestInput.of(id, token).name,
};

export interface WorkerRequestContext {
  requestId: string;
  tenantId: string;
  /** Aborted when the worker drains past its grace period or loses the request's lease. */
  signal: AbortSignal;
  /** The api's unstored input (kinds declared with `input: true`). */
  input?: Json;
}

/** A registry of kinds, each with its payload and answer (`WorkerRequestTypes` of libs/contracts; tests bring their own). */
export type WorkerRequestTypeMap = Record<string, { payload: object; answer: object }>;

/** Runs one kind of request on a worker: returns the answer, or throws the DomainError the api raises unchanged. */
export type WorkerRequestRun = (payload: Json, ctx: WorkerRequestContext) => Promise<Json>;

export interface AskOptions {
  /** How long the api waits for the answer in all. */
  waitMs: number;
  /** How long it waits for a worker to take the request (default: `waitMs`). */
  claimMs?: number;
  /** The route's "no worker answered" error (made by `noWorkerAnswered`); `taken`: a worker had taken the request. */
  noWorker: (taken: boolean) => DomainError;
  /** Handed to the worker holding the request over the bus and never stored (the kind's registry entry has `input: true`). */
  input?: Json;
  /** The queue whose workers run it: `system` (default) or `runs` (work that stays with the runs, e.g. adapter processes). */
  queue?: 'system' | 'runs';
}

interface RequestRow {
  id: string;
  tenant_id: string;
  kind: string;
  payload: Json;
  status: 'queued' | 'running' | 'done' | 'failed';
  result: Json | null;
  error: LosslessErrorEnvelope | null;
  lease_token: string | null;
  lease_live: boolean | null;
}

type Outcome = { status: 'done'; result: Json } | { status: 'failed'; error: LosslessErrorEnvelope };

/** The request's lease: held while `status = 'running'`, extended by the worker's heartbeat. */
const LEASE = new Lease({
  table: 'worker_requests',
  id: 'id',
  owner: 'lease_owner',
  token: 'lease_token',
  expiresAt: 'lease_expires_at',
  heldWhere: "status = 'running'",
});
/** How often the waiting api rereads the row when no doorbell rang. */
const POLL_MS = 250;
/** How long a worker that took a request waits for the api's unstored input (the api may have given up). */
const INPUT_WAIT_MS = 5_000;

/**
 * Ask a worker and wait (docs/design.md §2: the api never opens a workspace, spawns a server or an adapter; §4: leases):
 * the api writes a `worker_requests` row (kind, payload), enqueues a `worker.request` job and waits on the row,
 * woken by a doorbell after the worker's commit and rereading it every 250 ms. A worker takes the row under a lease
 * (owner, token, expiry in database time, heartbeat), runs the kind's handler and stores its answer or the error
 * envelope it threw, which the api raises again unchanged. A worker that dies mid-request stops beating: once its
 * lease expires the api enqueues the job again and another worker takes the row over. When no worker answers in
 * time the api raises the route's one "no worker answered" error, and a request nobody took is closed so that a
 * late worker does not run it. A process that is its own worker (embedded) runs the kind in place (`askHere`).
 */
@Injectable()
export class WorkerRequests<T extends WorkerRequestTypeMap = WorkerRequestTypes> {
  private readonly handlers = new Map<string, { run: WorkerRequestRun; input: boolean; where: string }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  private get leaseMs(): number {
    return this.config.tasks.leaseSeconds * 1000;
  }

  /**
   * Takes the handler of `kind` on a worker (WorkerRequestJob hands it every @WorkerRequestHandler at boot, checked
   * against the registry); `input`: it needs the api's unstored input. A kind taken twice is a boot error naming both handlers.
   */
  register(kind: string, run: WorkerRequestRun, opts: { input?: boolean; where?: string } = {}): void {
    const where = opts.where ?? kind;
    const twice = this.handlers.get(kind);
    if (twice) throw new Error(`worker request kind "${kind}" is declared twice: ${twice.where}, ${where}`);
    this.handlers.set(kind, { run, input: opts.input === true, where });
  }

  /** api: runs `kind` on a worker and returns its answer, or raises the error it threw (or the route's no-worker error). */
  async ask<K extends keyof T & string>(tenantId: string, kind: K, payload: T[K]['payload'], opts: AskOptions): Promise<T[K]['answer']> {
    const id = `wreq_${randomUUID().replace(/-/g, '')}`;
    const local = this.handlers.get(kind);
    if (local) return (await this.askHere(id, tenantId, kind, payload as Json, local.run, opts)) as T[K]['answer'];
    await execSql(this.dataSource.manager, `INSERT INTO worker_requests (id, tenant_id, kind, payload) VALUES ($1, $2, $3, $4)`, [
      id,
      tenantId,
      kind,
      JSON.stringify(payload),
    ]);
    const bell = await channelDoorbell(this.bus, WORKER_REQUEST_CHANNELS.request(id));
    let taken = false;
    try {
      await this.enqueue(opts.queue, id, tenantId, id);
      const start = Date.now();
      let fed: string | null = null;
      let requeued: string | null = null;
      for (;;) {
        const row = (await this.find(id))!;
        if (row.status === 'done') return (row.result ?? {}) as T[K]['answer'];
        if (row.status === 'failed' && row.error) throw fromErrorEnvelope(row.error, 'lossless');
        if (row.status === 'running' && row.lease_token) {
          taken = true;
          if (opts.input && row.lease_token !== fed) {
            fed = row.lease_token;
            await this.bus.publish(WORKER_REQUEST_CHANNELS.input(id, fed), opts.input);
          }
          if (!row.lease_live && row.lease_token !== requeued) {
            // Its worker stopped beating (died): another worker takes the row over.
            requeued = row.lease_token;
            await this.enqueue(opts.queue, id, tenantId, `${id}.${requeued.slice(0, 8)}`);
          }
        }
        const waited = Date.now() - start;
        if (waited > opts.waitMs || (!taken && waited > (opts.claimMs ?? opts.waitMs))) break;
        await bell.next(POLL_MS);
      }
    } finally {
      await bell.close();
    }
    const error = opts.noWorker(taken);
    await this.closeUntaken(id, error);
    throw error;
  }

  /**
   * The api's own process runs the kind (embedded: api and worker are one process, and die together, so a row, a queue
   * and a lease would add round trips and no safety): the handler is called here, its error raised as a worker's would
   * be (the same lossless envelope), and past `waitMs` it is aborted and the route's no-worker error raised.
   */
  private async askHere(id: string, tenantId: string, kind: string, payload: Json, handler: WorkerRequestRun, opts: AskOptions): Promise<Json> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort(new Error('the worker request took longer than the api waits'));
        reject(opts.noWorker(true));
      }, opts.waitMs);
    });
    try {
      const ctx = { requestId: id, tenantId, signal: abort.signal, ...(opts.input ? { input: opts.input } : {}) };
      const outcome = await Promise.race([this.outcomeOf({ id, kind, payload }, handler, ctx), late]);
      if (outcome.status === 'done') return outcome.result;
      throw fromErrorEnvelope(outcome.error, 'lossless');
    } finally {
      clearTimeout(timer);
    }
  }

  /** A handler's answer, or the error it threw as the lossless envelope the api raises again. */
  private async outcomeOf(
    row: Pick<RequestRow, 'id' | 'kind' | 'payload'>,
    handler: WorkerRequestRun | undefined,
    ctx: WorkerRequestContext,
  ): Promise<Outcome> {
    try {
      if (!handler) throw new Error(`no handler for worker request ${row.kind} on this worker`);
      return { status: 'done', result: await handler(row.payload, ctx) };
    } catch (err) {
      const { domain, internal } = toDomainError(err);
      if (internal) rootLogger().error({ request_id: row.id, kind: row.kind, err: String(err) }, 'worker request failed');
      return { status: 'failed', error: toErrorEnvelope(domain, 'lossless') };
    }
  }

  /** worker: the `worker.request` and `worker.request.runs` jobs. */
  async execute(job: JobPayloads['worker.request'], ctx: JobContext): Promise<void> {
    const id = job.requestId;
    const kind = (await this.find(id))?.kind;
    if (!kind) return;
    const handler = this.handlers.get(kind);
    const token = newLeaseToken();
    // Subscribed before the claim: the api learns the token from the committed claim, so its input cannot come first.
    const inbox = handler?.input ? await this.inbox(WORKER_REQUEST_CHANNELS.input(id, token)) : undefined;
    try {
      const won = await LEASE.claim(
        this.dataSource.manager,
        id,
        LEASE_OWNER,
        token,
        this.leaseMs,
        `status IN ('queued', 'running')`,
        `status = 'running', updated_at = now()`,
      );
      if (!won) return;
      await this.ring(id);
      const input = inbox ? await inbox.take(INPUT_WAIT_MS) : undefined;
      if (inbox && !input) {
        // The api gave up or its input was lost: the request goes back, unanswered.
        await execSql(this.dataSource.manager, `UPDATE worker_requests SET status = 'queued', ${LEASE.clearSet} WHERE id = $1 AND ${LEASE.heldBy(2)}`, [
          id,
          token,
        ]);
        return;
      }
      const row = (await this.find(id))!;
      const outcome = await this.run(row, handler?.run, token, input, ctx.signal);
      const { affected } = await execSql(
        this.dataSource.manager,
        `UPDATE worker_requests SET status = $3, result = $4, error = $5, updated_at = now(), ${LEASE.clearSet} WHERE id = $1 AND ${LEASE.heldBy(2)}`,
        [
          id,
          token,
          outcome.status,
          outcome.status === 'done' ? JSON.stringify(outcome.result) : null,
          outcome.status === 'failed' ? JSON.stringify(outcome.error) : null,
        ],
      );
      if (affected > 0) await this.ring(id);
    } finally {
      await inbox?.close();
    }
  }

  /** Runs the handler under the lease's heartbeat; a lost lease aborts it (another worker has the row). */
  private async run(row: RequestRow, handler: WorkerRequestRun | undefined, token: string, input: Json | undefined, signal: AbortSignal): Promise<Outcome> {
    const abort = new AbortController();
    const onAbort = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const stop = keepLease(() => LEASE.heartbeat(this.dataSource.manager, row.id, token, this.leaseMs), {
      leaseMs: this.leaseMs,
      onLost: () => abort.abort(new Error('the worker request lease was lost')),
      what: { request_id: row.id, kind: row.kind },
    });
    try {
      return await this.outcomeOf(row, handler, { requestId: row.id, tenantId: row.tenant_id, signal: abort.signal, ...(input ? { input } : {}) });
    } finally {
      stop();
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async inbox(channel: string): Promise<{ take(ms: number): Promise<Json | undefined>; close(): Promise<void> }> {
    let received: (m: Json) => void = () => undefined;
    const message = new Promise<Json>((r) => (received = r));
    const unsubscribe = await this.bus.subscribe(channel, (_c, m) => received(m as Json));
    return {
      take: async (ms) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
        try {
          return await Promise.race([message, timeout]);
        } finally {
          clearTimeout(timer);
        }
      },
      close: () => unsubscribe(),
    };
  }

  private enqueue(queue: AskOptions['queue'], id: string, tenantId: string, jobId: string): Promise<void> {
    return this.queue.enqueue(queue === 'runs' ? 'worker.request.runs' : 'worker.request', { requestId: id, tenantId }, { jobId });
  }

  private async ring(id: string): Promise<void> {
    await this.bus.publish(WORKER_REQUEST_CHANNELS.request(id), {}).catch((err: unknown) => {
      // The api rereads the row every 250 ms: a lost ring only delays it.
      rootLogger().warn({ request_id: id, err: String(err) }, 'worker request doorbell not rung');
    });
  }

  /** A request no worker took ends failed with the no-worker error, so a worker that comes later leaves it alone. */
  private async closeUntaken(id: string, error: DomainError): Promise<void> {
    await execSql(this.dataSource.manager, `UPDATE worker_requests SET status = 'failed', error = $2, updated_at = now() WHERE id = $1 AND status = 'queued'`, [
      id,
      JSON.stringify(toErrorEnvelope(error, 'lossless')),
    ]);
  }

  private async find(id: string): Promise<RequestRow | undefined> {
    const { rows } = await execSql<RequestRow>(
      this.dataSource.manager,
      `SELECT id, tenant_id, kind, payload, status, result, error, lease_token, ${LEASE.liveSql} AS lease_live FROM worker_requests WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Retention: finished requests older than `olderThan`. */
  async prune(olderThan: Date): Promise<number> {
    const { affected } = await execSql(this.dataSource.manager, `DELETE FROM worker_requests WHERE status IN ('done', 'failed') AND updated_at < $1`, [
      olderThan,
    ]);
    return affected;
  }
}
