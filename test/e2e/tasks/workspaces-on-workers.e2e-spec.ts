import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScratchDatabase } from '../../support/infra';
import { startServer, type ServerProcess } from '../../support/server-process';
import { Client, Json, Processes, scaledEnv } from './tasks-harness';

/**
 * Issue 18: everything that touches a workspace runs on a worker. The api here runs under bubblewrap with the
 * workspaces root and a host directory hidden (an empty tmpfs over each): every check, patch apply/revert and removal
 * it answers was done by the worker, which sees them. A worker that cannot reach a run's workspace (no shared volume)
 * fails a resume with a clear error instead of starting over in an empty directory.
 */
describe('workspaces on workers (scaled; the api cannot see any workspace)', () => {
  const procs = new Processes();
  let env: Record<string, string>;
  let db: ScratchDatabase;
  let api: ServerProcess;
  let worker: ServerProcess;
  let c: Client;
  let hostDir: string;
  let root: string;

  beforeAll(async () => {
    ({ env, db } = await scaledEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none' }));
    root = env.GATEWAY_WORKSPACES_DIR;
    hostDir = mkdtempSync(join(tmpdir(), 'hecate-host-'));
    api = await startServer('api', env, { hide: [root, hostDir], timeoutMs: 60_000 });
    procs.all.push(api);
    worker = await procs.start('worker', env);
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  it('host directories are checked on a worker: an in-place task the api cannot see is accepted and runs; a missing one is a 400', async () => {
    const { taskId, runId } = await c.startTask({
      execution_kind: 'file',
      workspace_mode: 'in_place',
      working_directory: hostDir,
      file_path: 'a.txt',
      file_content: 'hi\n',
    });
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(hostDir, 'a.txt'), 'utf8')).toBe('hi\n');
    const missing = await c.call('POST', '/hecate/v1/tasks', {
      execution_kind: 'file',
      workspace_mode: 'in_place',
      working_directory: join(hostDir, 'nope'),
      file_path: 'a.txt',
      file_content: 'x',
    });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('is not a directory');
    const escape = await c.call('POST', '/hecate/v1/tasks', {
      execution_kind: 'file',
      workspace_mode: 'in_place',
      working_directory: hostDir,
      file_path: '../out.txt',
      file_content: 'x',
    });
    expect(escape.status).toBe(400);
  });

  it('patch reverts run on a worker; a state or drift conflict comes back as the 409 the worker raised, with its details', async () => {
    const patchOf = async (content: string) => {
      const { taskId, runId } = await c.startTask({ execution_kind: 'file', file_path: 'notes/todo.txt', file_content: content });
      const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
      expect(run.status).toBe('completed');
      const [patch] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches`)) as unknown as Json[];
      return {
        target: join(run.workspace_path as string, 'notes', 'todo.txt'),
        base: `/hecate/v1/tasks/${taskId}/runs/${runId}/patches/${patch.artifact.id}`,
        taskId,
      };
    };
    const a = await patchOf('one\n');
    expect(await c.ok('POST', `${a.base}/revert`)).toMatchObject({ status: 'reverted' });
    expect(existsSync(a.target)).toBe(false);
    const again = await c.call('POST', `${a.base}/apply`);
    expect(again.status).toBe(409);
    expect((again.body as Json).error).toMatchObject({ type: 'conflict', artifact_status: 'reverted' });

    const b = await patchOf('two\n');
    writeFileSync(b.target, 'edited by hand\n');
    const drift = await c.call('POST', `${b.base}/revert`);
    expect(drift.status).toBe(409);
    expect((drift.body as Json).error).toMatchObject({ type: 'conflict', path: 'notes/todo.txt', found: 'different content', request_id: expect.any(String) });
    expect(readFileSync(b.target, 'utf8')).toBe('edited by hand\n');
    expect((await c.call('POST', `/hecate/v1/tasks/${b.taskId}/runs/run_nope/patches/x/apply`)).status).toBe(404);
  });

  it('deleting a task removes its workspaces on a worker', async () => {
    const { taskId, runId } = await c.startTask({ execution_kind: 'file', file_path: 'x.txt', file_content: 'x' });
    await c.waitStatus(taskId, runId, ['completed']);
    expect(existsSync(join(root, taskId))).toBe(true);
    expect([200, 204]).toContain((await c.call('DELETE', `/hecate/v1/tasks/${taskId}`)).status);
    expect(existsSync(join(root, taskId))).toBe(false);
  });

  it('a resume on a worker without the workspaces volume fails with a clear error; on a worker that has it, it continues there', async () => {
    const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: 'echo x >> log.txt; wc -l < log.txt' });
    const first = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(first.status).toBe('completed');
    await worker.stop();
    // Another worker whose GATEWAY_WORKSPACES_DIR is not the shared volume (here: hidden under an empty tmpfs).
    const stranger = await startServer('worker', env, { hide: [root], timeoutMs: 60_000 });
    procs.all.push(stranger);
    const resumed = await c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/resume`, { reason: 'again' });
    const failed = await c.waitStatus(taskId, resumed.id as string, ['completed', 'failed']);
    expect(failed).toMatchObject({ status: 'failed', error_kind: 'workspace_error' });
    expect(failed.last_error ?? failed.error).toMatch(/is not on this worker.*GATEWAY_WORKSPACES_DIR/);
    expect(readFileSync(join(first.workspace_path as string, 'log.txt'), 'utf8')).toBe('x\n');
    await stranger.stop();
    await procs.start('worker', env);
    const again = await c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/resume`, { reason: 'with the volume' });
    const done = await c.waitStatus(taskId, again.id as string, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', workspace_path: first.workspace_path });
    expect(readFileSync(join(first.workspace_path as string, 'log.txt'), 'utf8')).toBe('x\nx\n');
  });
});
