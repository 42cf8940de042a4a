import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from '../../support/http';
import { describeWithBwrap, processRunning } from '../../support/sandbox';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

const MiB = 1024 * 1024;
const LIMITS = {
  GATEWAY_TASK_SANDBOX_MAX_PROCESSES: '400',
  GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES: String(1024 * MiB),
  GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES: String(64 * MiB),
  GATEWAY_TASK_SANDBOX_TMP_BYTES: String(32 * MiB),
};
/** A sleep only the fork bomb starts (so the test can tell whether any of them outlived the command). */
const BOMB_SLEEP = 'sleep 977';

/**
 * Issue 26: the sandbox had no process, memory or disk limit (1,500 processes, 1.5 GB allocated). Every sandboxed
 * command now runs under rlimits (processes of the sandbox uid, memory per process, file size) and a bounded /tmp.
 * Each attack is bounded itself (a loop of at most 3,000 sleeps, 2 GB of input), so the test never hurts the machine
 * even where the limits fail: there the commands run to their timeout instead of failing fast.
 */
describeWithBwrap('sandbox resource limits (embedded, real bubblewrap, shell tasks)', () => {
  const procs = new Processes();
  let server: ServerProcess;
  let c: Client;

  beforeAll(async () => {
    server = await procs.start('all', embeddedTasksEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none', ...LIMITS }));
    c = new Client(server.url);
  }, 90_000);
  afterAll(() => procs.stopAll());

  const shell = async (command: string, timeoutMs = 60_000): Promise<{ run: Json; workspace: string; elapsedMs: number }> => {
    const started = Date.now();
    const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: command, timeout_ms: timeoutMs });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled', 'timed_out'], timeoutMs + 30_000);
    return { run, workspace: run.workspace_path as string, elapsedMs: Date.now() - started };
  };
  const errorOf = (run: Json): string => String(run.last_error ?? run.error ?? '');
  const healthy = async () => {
    const started = Date.now();
    const h = await request(server.url, 'GET', '/healthz');
    expect(h.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2000);
  };

  it('/healthz says which limits hold', async () => {
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as Json;
    expect(JSON.stringify(health)).toContain('"max_processes_per_sandbox_uid":400');
    expect(JSON.stringify(health)).toContain(`"max_memory_bytes_per_process":${1024 * MiB}`);
  });

  it('a fork bomb (3,000 background processes) fails fast with the process limit named, and leaves nothing running', async () => {
    const { run, elapsedMs } = await shell(`i=0; while [ $i -lt 3000 ]; do ${BOMB_SLEEP} & i=$((i+1)); done; wait`, 30_000);
    expect(run.status).toBe('failed');
    expect(errorOf(run)).toContain('process limit reached: GATEWAY_TASK_SANDBOX_MAX_PROCESSES');
    expect(elapsedMs).toBeLessThan(20_000);
    expect(processRunning(BOMB_SLEEP)).toBe(false);
    await healthy();
  }, 90_000);

  it('memory hogs (a Node.js allocation loop, sort of a 2 GB line) fail with the memory limit named', async () => {
    const node = await shell(`${process.execPath} -e "const a=[];for(let i=0;i<40;i++)a.push(Buffer.alloc(64<<20,1));console.log('allocated')"`);
    expect(node.run.status).toBe('failed');
    expect(errorOf(node.run)).toContain('memory limit reached: GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES');
    const sort = await shell('head -c 2G /dev/zero | sort > /dev/null');
    expect(sort.run.status).toBe('failed');
    expect(errorOf(sort.run)).toContain('memory limit reached');
    await healthy();
  }, 120_000);

  it('a huge file in the workspace stops at the file size limit; /tmp is bounded', async () => {
    const big = await shell('head -c 200M /dev/zero > big.bin');
    expect(big.run.status).toBe('failed');
    expect(errorOf(big.run)).toContain('file size limit exceeded: GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES');
    const file = join(big.workspace, 'big.bin');
    expect(existsSync(file) && statSync(file).size).toBeLessThanOrEqual(64 * MiB);
    const tmp = await shell('head -c 200M /dev/zero > /tmp/big.bin');
    expect(tmp.run.status).toBe('failed');
    await healthy();
  }, 120_000);

  it('after the attacks the worker runs commands as before (a Node.js child included)', async () => {
    const ok = await shell(`echo fine && ${process.execPath} -e "console.log(process.version)"`);
    expect(ok.run.status).toBe('completed');
    expect(processRunning(BOMB_SLEEP)).toBe(false);
    await healthy();
  }, 60_000);
});
