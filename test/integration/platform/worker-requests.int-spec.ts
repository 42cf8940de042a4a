import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { RedisEventBus } from '@core/bus/redis-event-bus.adapter';
import type { AppConfig } from '@core/config/app-config';
import { ConflictError, DomainError } from '@core/http/domain-error';
import { Declarations } from '@core/discovery/declarations';
import {
  Lease,
  NO_WORKER_OPERATOR_ACTION,
  noWorkerAnswered,
  registerWorkerRequestHandlers,
  type WorkerRequestContext,
  WorkerRequestHandler,
  WorkerRequests,
  type WorkerRequestRun,
} from '@core/lease';
import { BullmqRunQueue } from '@core/queue/bullmq-run-queue.adapter';
import { RedisConnections } from '@core/redis/redis-connections';
import { MIGRATIONS } from '@migrations';
import { openTestDatabase, type TestDatabase } from '../../support/database';
import { testRedisUrl, uniqueId, waitFor } from '../../support/infra';

/** The test's own registry: any kind, JSON in and out (the server's is libs/contracts/src/worker-requests.ts). */
type TestKinds = Record<string, { payload: Record<string, unknown>; answer: Record<string, unknown> }>;
/** The kinds a booting worker must handle, and which take the api's unstored input. */
const DECLARED_KINDS = { 'test.greet': { input: false }, 'test.keyed': { input: true } };

/** One process of the test: its own Redis connections, bus and queue, and the primitive on them. */
interface Proc {
  requests: WorkerRequests<TestKinds>;
  close(): Promise<void>;
}

const config = { tasks: { leaseSeconds: 1 } } as unknown as AppConfig;
const noWorker = (taken: boolean) => noWorkerAnswered(taken ? 'the worker did not answer' : 'no worker took the request', { userMessage: 'It did not run.' });

/** Providers of a worker that declare their handlers, as the modules do. */
class Greeter {
  @WorkerRequestHandler<TestKinds>('test.greet')
  async greet(payload: { name: string }, ctx: WorkerRequestContext) {
    return { hello: payload.name, tenant: ctx.tenantId };
  }

  @WorkerRequestHandler<TestKinds>('test.keyed')
  async keyed(_payload: unknown, ctx: WorkerRequestContext) {
    return { got: ctx.input?.key === 'k-1' };
  }
}

class SecondGreeter {
  @WorkerRequestHandler<TestKinds>('test.greet')
  async greet() {
    return { hello: 'twice' };
  }
}

/** The worker's boot, as WorkerRequestJob's: the handlers found among `providers` (as Nest's DiscoveryService lists them). */
const boot = (requests: WorkerRequests<TestKinds>, providers: object[]): void => {
  const discovery = { getProviders: () => providers.map((instance) => ({ instance })) } as unknown as DiscoveryService;
  registerWorkerRequestHandlers(requests, new Declarations(discovery, new MetadataScanner(), new Reflector()), DECLARED_KINDS);
};

/**
 * The worker-request primitive (core/lease WorkerRequests) on Postgres, a BullMQ queue and the Redis bus, with an api
 * process and worker processes of their own: the answer, the worker's error raised unchanged, the one no-worker
 * error, unstored input handed to the holder, and a worker that dies mid-request taken over after its lease expires.
 */
describe('worker requests (postgres, bullmq, redis bus)', () => {
  let tdb: TestDatabase;
  let ds: DataSource;
  let prefix: string;
  const procs: Proc[] = [];

  const proc = async (worker?: {
    concurrency: number;
    handlers: Record<string, WorkerRequestRun>;
    input?: string[];
    queues?: Array<'system' | 'runs'>;
    /** Providers whose @WorkerRequestHandler methods the worker finds at boot. */
    declared?: object[];
  }): Promise<Proc> => {
    const redis = new RedisConnections(testRedisUrl());
    await redis.waitReady();
    const bus = new RedisEventBus(redis, `${prefix}:bus:`);
    const queue = new BullmqRunQueue(redis, { prefix: `${prefix}:q`, lockDurationMs: 30_000, enqueueTimeoutMs: 2000 });
    const requests = new WorkerRequests<TestKinds>(ds, config, queue, bus);
    if (worker) {
      for (const [kind, run] of Object.entries(worker.handlers)) requests.register(kind, run, { input: worker.input?.includes(kind) });
      if (worker.declared) boot(requests, worker.declared);
      await queue.consume(worker.queues ?? ['system'], worker.concurrency, async (name, payload, ctx) => {
        if (name === 'worker.request' || name === 'worker.request.runs') await requests.execute(payload as { requestId: string; tenantId: string }, ctx);
      });
    }
    const p = { requests, close: async () => (await queue.close(), await bus.close(), await redis.close()) };
    procs.push(p);
    return p;
  };
  const row = async (id: string) => (await ds.query(`SELECT * FROM worker_requests WHERE id = $1`, [id]))[0] as Record<string, unknown>;
  const lastOfKind = async (kind: string) =>
    (await ds.query(`SELECT * FROM worker_requests WHERE kind = $1 ORDER BY created_at DESC LIMIT 1`, [kind]))[0] as Record<string, unknown> | undefined;

  beforeAll(async () => {
    tdb = await openTestDatabase('postgres', { poolSize: 20, prefix: 'hecate-wreq-' });
    ds = tdb.dataSource;
  }, 60_000);
  beforeEach(() => {
    prefix = uniqueId('wreq');
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    while (procs.length) await procs.pop()!.close();
  });
  afterAll(async () => {
    await tdb?.close();
  });

  it('answers with what the worker returned, keys in its order, and leaves the row done with no lease', async () => {
    const api = await proc();
    await proc({ concurrency: 2, handlers: { 'test.echo': async (payload, ctx) => ({ zeta: 1, alpha: { echo: payload.text, tenant: ctx.tenantId } }) } });
    const answer = await api.requests.ask('tenant-a', 'test.echo', { text: 'hi' }, { waitMs: 10_000, noWorker });
    expect(JSON.stringify(answer)).toBe(JSON.stringify({ zeta: 1, alpha: { echo: 'hi', tenant: 'tenant-a' } }));
    const stored = (await lastOfKind('test.echo'))!;
    expect(stored).toMatchObject({ status: 'done', tenant_id: 'tenant-a', payload: { text: 'hi' }, lease_token: null, lease_expires_at: null });
  });

  it('raises the error the worker threw unchanged: type, status, messages, details and headers', async () => {
    const api = await proc();
    const thrown = new ConflictError('the patch drifted', { details: { paths: ['a.txt'], z: 1, a: 2 }, headers: { 'retry-after': '3' } }, 'patch_conflict');
    await proc({ concurrency: 1, handlers: { 'test.fail': () => Promise.reject(thrown) } });
    const err = (await api.requests.ask('t', 'test.fail', {}, { waitMs: 10_000, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect({ type: err.type, status: err.status, message: err.message, user: err.userMessage, op: err.operatorAction, headers: err.headers }).toEqual({
      type: 'patch_conflict',
      status: 409,
      message: 'the patch drifted',
      user: thrown.userMessage,
      op: thrown.operatorAction,
      headers: { 'retry-after': '3' },
    });
    expect(JSON.stringify(err.details)).toBe(JSON.stringify(thrown.details));
    expect((await lastOfKind('test.fail'))!.status).toBe('failed');
  });

  it('queue runs: the request goes to the workers of the runs queue, not to those of the system queue', async () => {
    const api = await proc();
    await proc({ concurrency: 1, handlers: { 'test.where': async () => ({ by: 'system' }) } });
    await proc({ concurrency: 1, handlers: { 'test.where': async () => ({ by: 'runs' }) }, queues: ['runs'] });
    expect(await api.requests.ask('t', 'test.where', {}, { waitMs: 10_000, noWorker, queue: 'runs' })).toEqual({ by: 'runs' });
    expect(await api.requests.ask('t', 'test.where', {}, { waitMs: 10_000, noWorker })).toEqual({ by: 'system' });
  });

  it("a worker runs the @WorkerRequestHandler methods of its providers, found at boot; an `input` kind gets the api's input", async () => {
    const api = await proc();
    await proc({ concurrency: 1, handlers: {}, declared: [new Greeter()] });
    expect(await api.requests.ask('tenant-g', 'test.greet', { name: 'ada' }, { waitMs: 10_000, noWorker })).toEqual({ hello: 'ada', tenant: 'tenant-g' });
    expect(await api.requests.ask('t', 'test.keyed', {}, { waitMs: 10_000, noWorker, input: { key: 'k-1' } })).toEqual({ got: true });
    expect(JSON.stringify(await lastOfKind('test.keyed'))).not.toContain('k-1');
  });

  it('a kind declared twice stops the worker at boot, naming both handlers', async () => {
    const { requests } = await proc();
    expect(() => boot(requests, [new Greeter(), new SecondGreeter()])).toThrow(
      'worker request kind "test.greet" is declared twice: Greeter.greet, SecondGreeter.greet',
    );
  });

  it('a kind no worker has a handler for is a 500 internal error, not a hang', async () => {
    const api = await proc();
    await proc({ concurrency: 1, handlers: {} });
    const err = (await api.requests.ask('t', 'test.unknown', {}, { waitMs: 10_000, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect(err.status).toBe(500);
  });

  it('no worker: the one no-worker error (503, one operator action) in time, and a late worker does not run the request', async () => {
    const api = await proc();
    const started = Date.now();
    const err = (await api.requests.ask('t', 'test.late', {}, { waitMs: 600, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect({ type: err.type, status: err.status, message: err.message, op: err.operatorAction }).toEqual({
      type: 'service_unavailable',
      status: 503,
      message: 'no worker took the request',
      op: NO_WORKER_OPERATOR_ACTION,
    });
    const ran: string[] = [];
    await proc({ concurrency: 1, handlers: { 'test.late': async () => (ran.push('late'), {}) } });
    const closed = (await lastOfKind('test.late'))!;
    expect(closed.status).toBe('failed');
    // The job is still queued: the worker takes it, finds the request closed and leaves it alone.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ran).toEqual([]);
    expect((await row(String(closed.id))).status).toBe('failed');
  });

  it('a process that is its own worker (embedded) runs the kind in place: the answer, the error unchanged, input, no row; past waitMs the no-worker error and the handler aborted', async () => {
    let aborted = false;
    const thrown = new ConflictError('the patch drifted', { details: { paths: ['a.txt'] } }, 'patch_conflict');
    const here = await proc({
      concurrency: 1,
      input: ['test.here'],
      handlers: {
        'test.here': async (payload, ctx) => ({ echo: payload.text, tenant: ctx.tenantId, key: ctx.input?.key ?? null }),
        'test.here.fail': () => Promise.reject(thrown),
        'test.here.slow': (_p, ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => ((aborted = true), reject(ctx.signal.reason)), { once: true })),
      },
    });
    expect(await here.requests.ask('tenant-h', 'test.here', { text: 'hi' }, { waitMs: 10_000, noWorker, input: { key: 'k' } })).toEqual({
      echo: 'hi',
      tenant: 'tenant-h',
      key: 'k',
    });
    const err = (await here.requests.ask('t', 'test.here.fail', {}, { waitMs: 10_000, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect({ type: err.type, status: err.status, message: err.message, details: err.details }).toEqual({
      type: 'patch_conflict',
      status: 409,
      message: 'the patch drifted',
      details: { paths: ['a.txt'] },
    });
    const late = (await here.requests.ask('t', 'test.here.slow', {}, { waitMs: 300, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect({ status: late.status, message: late.message }).toEqual({ status: 503, message: 'the worker did not answer' });
    expect(aborted).toBe(true);
    for (const kind of ['test.here', 'test.here.fail', 'test.here.slow']) expect(await lastOfKind(kind)).toBeUndefined();
  });

  it('claimMs: a request no worker takes in time fails early with taken = false', async () => {
    const api = await proc();
    const started = Date.now();
    const err = (await api.requests.ask('t', 'test.unclaimed', {}, { claimMs: 300, waitMs: 20_000, noWorker }).catch((e: unknown) => e)) as DomainError;
    expect(err.message).toBe('no worker took the request');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('hands unstored input to the worker holding the request; the row never holds it', async () => {
    const api = await proc();
    await proc({ concurrency: 1, handlers: { 'test.secret': async (_p, ctx) => ({ got: ctx.input?.secret === 's3cr3t' }) }, input: ['test.secret'] });
    const answer = await api.requests.ask('t', 'test.secret', { name: 'x' }, { waitMs: 10_000, noWorker, input: { secret: 's3cr3t' } });
    expect(answer).toEqual({ got: true });
    const stored = JSON.stringify(await lastOfKind('test.secret'));
    expect(stored).not.toContain('s3cr3t');
  });

  it('a worker that dies mid-request stops beating: after its lease expires another worker takes the request over and answers', async () => {
    const api = await proc();
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const calls: string[] = [];
    // Worker A takes the request first (B starts later) and then "dies": its handler never returns, its beats fail.
    await proc({
      concurrency: 1,
      handlers: {
        'test.takeover': async () => {
          calls.push('a');
          jest.spyOn(Lease.prototype, 'heartbeat').mockRejectedValue(new Error('worker a is gone'));
          await stuck;
          return { by: 'a' };
        },
      },
    });
    const asked = api.requests.ask('t', 'test.takeover', {}, { waitMs: 20_000, noWorker });
    await waitFor(() => calls.length === 1, { what: 'worker a to take the request' });
    await proc({ concurrency: 1, handlers: { 'test.takeover': async () => (calls.push('b'), { by: 'b' }) } });
    expect(await asked).toEqual({ by: 'b' });
    expect(calls).toEqual(['a', 'b']);
    // Worker A's late answer is refused by the token check: the stored answer stays B's.
    jest.restoreAllMocks();
    release();
    const id = String((await lastOfKind('test.takeover'))!.id);
    // A negative: A's late write must not land (its token check refuses it; nothing marks the refusal).
    await new Promise((r) => setTimeout(r, 300));
    expect((await row(id)).result).toEqual({ by: 'b' });
  }, 30_000);

  it('the migration keeps workspace_ops rows and moves agent_chat_reverts rows in as agent_chat.revert requests (down and up)', async () => {
    const Migration = MIGRATIONS.find((m) => m.name === 'WorkerRequests1796700000000')!;
    const migration = new Migration();
    const runner = ds.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query(`DELETE FROM worker_requests`);
      await migration.down(runner);
      await runner.query(
        `INSERT INTO workspace_ops (id, tenant_id, kind, args, status, result) VALUES ('wsop_1', 't', 'task.check', '{"a":1}', 'done', '{"problems":[]}')`,
      );
      await runner.query(`INSERT INTO agent_chat_sessions (id, tenant_id, title, runtime_kind, status) VALUES ('agent_chat_1', 't', 'x', 'agent', 'idle')`);
      await runner.query(
        `INSERT INTO agent_chat_reverts (id, tenant_id, session_id, message_id, paths, status, error) VALUES ('revert_1', 't', 'agent_chat_1', 'msg_1', '["a.txt"]', 'failed', '{"type":"revert_failed","message":"m"}')`,
      );
      await migration.up(runner);
      const rows = (await runner.query(`SELECT id, kind, payload, status, result, error FROM worker_requests ORDER BY id DESC`)) as Record<string, unknown>[];
      expect(rows).toEqual([
        { id: 'wsop_1', kind: 'task.check', payload: { a: 1 }, status: 'done', result: { problems: [] }, error: null },
        {
          id: 'revert_1',
          kind: 'agent_chat.revert',
          payload: { session_id: 'agent_chat_1', message_id: 'msg_1', paths: ['a.txt'] },
          status: 'failed',
          result: null,
          error: { type: 'revert_failed', message: 'm' },
        },
      ]);
      expect(await runner.query(`SELECT to_regclass('agent_chat_reverts') AS t`)).toEqual([{ t: null }]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
