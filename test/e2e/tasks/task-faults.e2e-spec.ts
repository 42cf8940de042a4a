import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrivateRedis, ScratchDatabase } from '../../support/infra';
import { sql, startPrivateRedis, waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { Client, expectGapFree, Json, Processes, scaledEnv, SseClient, pidAlive } from './tasks-harness';

const LEASE_MS = 2000;
const TERMINAL = ['run.finished', 'run.failed', 'run.cancelled'];

/**
 * Fault tests of issue 5 against real Postgres, real Redis and real worker processes, with a 2 s lease and
 * a 500 ms reconcile interval so recovery happens in seconds.
 */
describe('task runtime under faults (scaled)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;
  let api: ServerProcess;
  const orphans: number[] = [];

  beforeAll(async () => {
    const s = await scaledEnv({
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
      GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
      GATEWAY_QUEUE_LOCK_MS: '2000',
      // The tests watch the commands' pids from the host.
      GATEWAY_TASK_SANDBOX: 'none',
    });
    db = s.db;
    env = s.env;
    api = await procs.start('api', env);
    c = new Client(api.url);
  });
  afterAll(async () => {
    for (const pid of orphans) if (pidAlive(pid)) process.kill(-pid, 'SIGKILL');
    await procs.stopAll();
    await db?.drop();
  });

  /** Starts a long shell run on `worker` and waits until its command is running there. */
  const runningOn = async (worker: ServerProcess, command: string) => {
    // The command runs as the sandbox's unprivileged uid: it writes its pid into its own workspace.
    const started = await c.startTask({ execution_kind: 'shell', shell_command: `echo $$ > pid; echo started; ${command}` });
    const pidFile = join(started.run.workspace_path as string, 'pid');
    const events = await waitFor(
      async () => {
        const list = await c.events(started.taskId, started.runId);
        return list.some((e) => e.type === 'tool.shell.output_chunk') && existsSync(pidFile) ? list : undefined;
      },
      { what: 'the command running' },
    );
    expect(events.find((e) => e.type === 'run.started')!.data.worker).toContain(`:${worker.proc.pid}:`);
    const childPid = Number(readFileSync(pidFile, 'utf8'));
    orphans.push(childPid);
    return { ...started, childPid };
  };

  it('kill -9 of the worker mid-step: another worker reclaims the run within 2 × lease; the completed step is not re-run, the ambiguous one is reported failed; no gap, no duplicate', async () => {
    const doomed = await procs.start('worker', env);
    const { taskId, runId } = await runningOn(doomed, 'sleep 30'); // long enough to still be running however slowly the survivor boots
    const survivor = await procs.start('worker', env);
    const killedAt = Date.now();
    await doomed.stop('SIGKILL');

    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 20_000);
    expect(run).toMatchObject({ status: 'failed', error_kind: 'ambiguous_side_effect', attempts: 2 });
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    const starts = events.filter((e) => e.type === 'run.started');
    expect(starts.map((e) => e.data.attempt)).toEqual([1, 2]);
    expect(starts[1].data.worker).toContain(`:${survivor.proc.pid}:`);
    expect(new Date(starts[1].occurred_at as string).getTime() - killedAt).toBeLessThanOrEqual(2 * LEASE_MS);
    const gaps = events.filter((e) => e.type === 'gap.run_disconnected');
    expect(gaps).toHaveLength(1);
    expect(gaps[0].data).toMatchObject({ reason: 'worker_lease_expired', prior_status: 'running' });
    expect(events.filter((e) => TERMINAL.includes(e.type as string))).toHaveLength(1);
    // The workspace step completed before the crash and was not run again.
    expect(events.filter((e) => e.type === 'tool.invoked' && e.data.kind === 'workspace')).toHaveLength(1);
    const steps = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/steps`)) as unknown as Json[];
    expect(steps.map((s) => [s.kind, s.status, s.error_kind ?? ''])).toEqual([
      ['workspace', 'completed', ''],
      ['shell', 'failed', 'ambiguous_side_effect'],
    ]);
    await survivor.stop('SIGTERM');
  });

  it('SIGSTOP a worker past its lease, another takes over, SIGCONT: the late owner is rejected; exactly one terminal state', async () => {
    const paused = await procs.start('worker', env);
    const { taskId, runId, childPid } = await runningOn(paused, 'sleep 12; echo late-output');
    paused.proc.kill('SIGSTOP');
    const taker = await procs.start('worker', env);
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 20_000);
    expect(run).toMatchObject({ status: 'failed', error_kind: 'ambiguous_side_effect', attempts: 2 });
    // Feed cursors are stamped after commit: compare once every event has its own.
    const atTakeover = await waitFor(
      async () => {
        const events = await c.events(taskId, runId);
        return events.every((e) => e.cursor !== undefined) ? events : undefined;
      },
      { what: 'every event of the run stamped with its feed cursor' },
    );
    expect(atTakeover.filter((e) => e.type === 'run.started')[1].data.worker).toContain(`:${taker.proc.pid}:`);

    paused.proc.kill('SIGCONT');
    // The resumed worker notices (heartbeat or guarded write rejected) and stops; its command is killed.
    await waitFor(() => /lease lost|stopped: lease lost/.test(paused.output()), { what: 'the late owner to be rejected', timeoutMs: 15_000 });
    await waitFor(() => !pidAlive(childPid), { what: 'the late owner to kill its command', timeoutMs: 15_000 });
    const after = await c.events(taskId, runId);
    expect(after).toEqual(atTakeover);
    expectGapFree(after);
    expect(after.filter((e) => TERMINAL.includes(e.type as string))).toHaveLength(1);
    expect(after.some((e) => e.type === 'tool.shell.output_chunk' && String(e.data.data).includes('late-output'))).toBe(false);
    expect(await c.run(taskId, runId)).toMatchObject({ status: 'failed', attempts: 2 });
    const [row] = await sql<{ lease_token: string | null }>(db.url, 'SELECT lease_token FROM task_runs WHERE id = $1', [runId]);
    expect(row.lease_token).toBeNull();
    await Promise.all([paused.stop('SIGKILL'), taker.stop('SIGTERM')]);
  });

  describe('Redis restart during a run', () => {
    let redis: PrivateRedis;
    let rc: Client;
    beforeAll(async () => {
      redis = await startPrivateRedis();
      const renv = { ...env, REDIS_URL: redis.url };
      const [api] = await Promise.all([procs.start('api', renv), procs.start('worker', renv)]);
      rc = new Client(api.url);
    });
    afterAll(() => redis?.stop());

    it('workers reconnect without a restart and an SSE client sees every event (refilled from Postgres)', async () => {
      const { taskId, runId } = await rc.startTask({ execution_kind: 'shell', shell_command: 'for i in $(seq 1 16); do echo tick-$i; sleep 0.25; done' });
      const sse = new SseClient(`${rc.url}/hecate/v1/tasks/${taskId}/runs/${runId}/stream`);
      await waitFor(() => sse.frames.some((f) => JSON.parse(f.data).data.event_type === 'tool.shell.output_chunk'), { what: 'output streaming' });
      await redis.stop();
      await waitFor(async () => (await fetch(`${rc.url}/readyz`)).status === 503, { what: 'api to see Redis down' });
      await redis.start();
      await sse.done;
      expect(sse.frames[sse.frames.length - 1].event).toBe('done');
      const snapshots = sse.frames.filter((f) => f.event === 'snapshot');
      const events = await rc.events(taskId, runId);
      expectGapFree(events);
      expect(snapshots.map((f) => Number(f.id))).toEqual(events.map((e) => e.sequence));
      expect((await rc.run(taskId, runId)).status).toBe('completed');
      const stdout = events
        .filter((e) => e.type === 'tool.shell.output_chunk')
        .map((e) => e.data.data)
        .join('');
      expect(stdout).toContain('tick-16');

      // The queue works again without restarting any process.
      const next = await rc.startTask({ execution_kind: 'shell', shell_command: 'echo after-restart' });
      expect(await rc.waitStatus(next.taskId, next.runId, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
    });

    it('a start while Redis is down is kept queued in Postgres and enqueued by the reconciler once Redis is back', async () => {
      await redis.stop();
      const { taskId, runId, run } = await rc.startTask({ execution_kind: 'shell', shell_command: 'echo queued-while-down' });
      expect(run.status).toBe('queued');
      const [row] = await sql<{ enqueued_at: Date | null }>(db.url, 'SELECT enqueued_at FROM task_runs WHERE id = $1', [runId]);
      expect(row.enqueued_at).toBeNull();
      await redis.start();
      expect(await rc.waitStatus(taskId, runId, ['completed', 'failed'], 30_000)).toMatchObject({ status: 'completed' });
    });
  });

  it('pg_terminate_backend on every app connection: no process crashes and the run completes', async () => {
    const worker = await procs.start('worker', env);
    const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: 'for i in $(seq 1 12); do echo n-$i; sleep 0.25; done' });
    const chunks = async () => (await c.events(taskId, runId)).filter((e) => e.type === 'tool.shell.output_chunk').length;
    await waitFor(async () => (await chunks()) > 0, { what: 'output streaming' });
    const terminate = () =>
      sql<{ n: number }>(
        db.url,
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
    expect((await terminate())[0].n).toBeGreaterThan(0);
    // Work continues on new connections; terminate everything once more while it does.
    const seen = await waitFor(
      async () => {
        try {
          return await chunks();
        } catch {
          return undefined;
        }
      },
      { what: 'the api to answer again' },
    );
    await waitFor(async () => (await chunks()) > seen, { what: 'the worker to write again' });
    expect((await terminate())[0].n).toBeGreaterThan(0);
    const run = await waitFor(
      async () => {
        try {
          const r = await c.run(taskId, runId);
          return ['completed', 'failed', 'cancelled'].includes(r.status as string) ? r : undefined;
        } catch {
          return undefined; // a request may land on a connection that was just terminated
        }
      },
      { what: 'the run to finish', timeoutMs: 30_000 },
    );
    expect(run.status).toBe('completed');
    expect(api.proc.exitCode).toBeNull();
    expect(worker.proc.exitCode).toBeNull();
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    expect(events.map((e) => e.data.data).join('')).toContain('n-12');
    await worker.stop('SIGTERM');
  });

  it('20 parallel starts of one task: one run, 19 conflicts', async () => {
    const task = await c.createTask({ execution_kind: 'shell', shell_command: 'sleep 0.2' });
    const results = await Promise.all(Array.from({ length: 20 }, () => c.call('POST', `/hecate/v1/tasks/${task.id}/start`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect(((await c.ok('GET', `/hecate/v1/tasks/${task.id}/runs`)) as unknown as Json[]).length).toBe(1);
  });
});

/** Issue 18: with only the lease set, the queue's redelivery and the reconciler follow it — takeover within 2 × lease. */
describe('one recovery clock (scaled, only GATEWAY_TASK_QUEUE_LEASE_SECONDS set)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;

  beforeAll(async () => {
    const s = await scaledEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none', GATEWAY_TASK_QUEUE_LEASE_SECONDS: '3', GATEWAY_TASK_SANDBOX: 'none' });
    db = s.db;
    env = s.env;
    c = new Client((await procs.start('api', env)).url);
  });
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  it('kill -9 of the worker mid-step: the run is taken over by the other worker within 2 × lease', async () => {
    const doomed = await procs.start('worker', env);
    const { taskId, runId, run } = await c.startTask({ execution_kind: 'shell', shell_command: 'echo $$ > pid; echo started; sleep 30' });
    await waitFor(
      async () => existsSync(join(run.workspace_path as string, 'pid')) && (await c.events(taskId, runId)).some((e) => e.type === 'tool.shell.output_chunk'),
      {
        what: 'the command running',
      },
    );
    const survivor = await procs.start('worker', env);
    const killedAt = Date.now();
    await doomed.stop('SIGKILL');
    const orphan = Number(readFileSync(join(run.workspace_path as string, 'pid'), 'utf8'));
    try {
      await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], 20_000);
      const starts = (await c.events(taskId, runId)).filter((e) => e.type === 'run.started');
      expect(starts).toHaveLength(2);
      expect(starts[1].data.worker).toContain(`:${survivor.proc.pid}:`);
      expect(new Date(starts[1].occurred_at as string).getTime() - killedAt).toBeLessThanOrEqual(2 * 3000);
    } finally {
      if (pidAlive(orphan)) process.kill(-orphan, 'SIGKILL');
    }
  });
});
