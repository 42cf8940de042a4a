import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../support/infra';
import { Client, embeddedTasksEnv, expectGapFree, Json, Processes, pidAlive } from './tasks-harness';

describe('embedded recovery and retention', () => {
  const procs = new Processes();
  const orphans: number[] = [];
  afterAll(async () => {
    for (const pid of orphans) if (pidAlive(pid)) process.kill(-pid, 'SIGKILL');
    await procs.stopAll();
  });

  it('after a crash, boot reconcile reclaims the running run at once and enqueues the queued one', async () => {
    const env = embeddedTasksEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none', GATEWAY_TASK_SANDBOX: 'none', GATEWAY_TASK_QUEUE_WORKERS: '1' });
    const first = await procs.start('all', env);
    const c1 = new Client(first.url);
    const busy = await c1.startTask({ execution_kind: 'shell', shell_command: 'echo $$ > pid; sleep 30' });
    const pidFile = join(busy.run.workspace_path as string, 'pid');
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', { what: 'the first command running' });
    orphans.push(Number(readFileSync(pidFile, 'utf8')));
    const waiting = await c1.startTask({ execution_kind: 'shell', shell_command: 'echo second' });
    expect((await c1.run(waiting.taskId, waiting.runId)).status).toBe('queued');
    await first.stop('SIGKILL');

    const second = await procs.start('all', env);
    const c2 = new Client(second.url);
    expect(await c2.waitStatus(waiting.taskId, waiting.runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const reclaimed = await c2.waitStatus(busy.taskId, busy.runId, ['completed', 'failed', 'cancelled']);
    expect(reclaimed).toMatchObject({ status: 'failed', error_kind: 'ambiguous_side_effect', attempts: 2 });
    const events = await c2.events(busy.taskId, busy.runId);
    expectGapFree(events);
    expect(events.find((e) => e.type === 'gap.run_disconnected')!.data).toMatchObject({ reason: 'boot_reconcile', action: 'requeued' });
    await second.stop('SIGTERM');
  });

  it('retention prunes old events and artifacts beyond the limits, keeps active runs, and lists its sweeps', async () => {
    const env = embeddedTasksEnv({
      GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
      GATEWAY_TASK_SANDBOX: 'none',
      GATEWAY_RETENTION_RUN_EVENTS_MAX_COUNT: '4',
      GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_COUNT: '1',
    });
    const c = new Client((await procs.start('all', env)).url);
    const done = await c.startTask({ execution_kind: 'file', file_path: 'a.txt', file_content: 'a' });
    await c.waitStatus(done.taskId, done.runId, ['completed']);
    const doneToo = await c.startTask({ execution_kind: 'file', file_path: 'b.txt', file_content: 'b' });
    await c.waitStatus(doneToo.taskId, doneToo.runId, ['completed']);
    const gated = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    expect(gated.run.status).toBe('awaiting_approval');
    const gatedEvents = (await c.events(gated.taskId, gated.runId)).length;

    const sweep = await c.ok('POST', '/hecate/v1/system/retention/run');
    expect(sweep).toMatchObject({
      trigger: 'manual',
      status: 'completed',
      results: { run_events: { deleted: expect.any(Number), max_count: 4 }, run_artifacts: { max_count: 1 } },
    });
    expect(sweep.results.run_events.deleted).toBeGreaterThan(0);
    const remaining = [...(await c.events(done.taskId, done.runId)), ...(await c.events(doneToo.taskId, doneToo.runId))];
    expect(remaining.length).toBeLessThanOrEqual(4);
    expect((await c.events(gated.taskId, gated.runId)).length).toBe(gatedEvents);
    const artifacts = [
      ...((await c.ok('GET', `/hecate/v1/tasks/${done.taskId}/artifacts`)) as unknown as Json[]),
      ...((await c.ok('GET', `/hecate/v1/tasks/${doneToo.taskId}/artifacts`)) as unknown as Json[]),
    ];
    expect(artifacts).toHaveLength(1);
    const history = (await c.ok('GET', '/hecate/v1/system/retention/runs')) as unknown as Json[];
    expect(history[0]).toMatchObject({ id: sweep.id, status: 'completed' });
  });
});
