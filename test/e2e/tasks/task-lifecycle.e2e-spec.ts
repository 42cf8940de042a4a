import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScratchDatabase } from '../../support/infra';
import { sql, waitFor } from '../../support/infra';
import { queryEmbedded } from '../../support/embedded-db';
import { settle } from '../../support/sdk';
import { startServer } from '../../support/server-process';
import { Client, embeddedTasksEnv, expectGapFree, Json, Processes, scaledEnv, pidAlive } from './tasks-harness';

/** shell is gated (approve to run); git and file run without a gate. */
const POLICIES = 'shell_exec';
/** These tests observe side effects on the host (markers, pids): no OS sandbox (task-sandbox covers it). */
const SANDBOX = 'none';
const MAX_OUTPUT = 65536;

describe.each(['embedded', 'scaled'] as const)('task lifecycle (%s)', (mode) => {
  const procs = new Processes();
  let db: ScratchDatabase | undefined;
  let c: Client;
  /** Where the sandbox is reported: the process that runs tools (the worker's side port in scaled mode). */
  let toolHealthUrl: string;
  /** The embedded server's environment (its GATEWAY_DATA_DIR), to stop it, read its PGlite rows and start it again. */
  let embedded: Record<string, string> | undefined;
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-lc-')));

  beforeAll(async () => {
    if (mode === 'embedded') {
      embedded = embeddedTasksEnv({
        GATEWAY_TASK_APPROVAL_POLICIES: POLICIES,
        GATEWAY_TASK_SANDBOX: SANDBOX,
        GATEWAY_TASK_MAX_OUTPUT_BYTES: String(MAX_OUTPUT),
      });
      c = new Client((await procs.start('all', embedded)).url);
      toolHealthUrl = c.url;
    } else {
      const s = await scaledEnv({ GATEWAY_TASK_APPROVAL_POLICIES: POLICIES, GATEWAY_TASK_SANDBOX: SANDBOX, GATEWAY_TASK_MAX_OUTPUT_BYTES: String(MAX_OUTPUT) });
      db = s.db;
      const [api, worker] = await Promise.all([procs.start('api', s.env), procs.start('worker', s.env)]);
      toolHealthUrl = worker.url;
      c = new Client(api.url);
    }
  });
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  /** Starts a task and approves its pre-execution gate when there is one. */
  const startApproved = async (dto: Json) => {
    const started = await c.startTask(dto);
    if (started.run.status === 'awaiting_approval') {
      const [approval] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: started.taskId } })).data;
      await c.api.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
        path: { task_id: started.taskId, approval_id: approval.id },
        body: { decision: 'approve' },
      });
    }
    return started;
  };

  it('runs a shell task to completion: steps, stdout/stderr artifacts, exit code, gap-free events on both feeds', async () => {
    const { taskId, runId } = await startApproved({
      execution_kind: 'shell',
      shell_command: 'echo hello; echo oops >&2; echo "home=$HOME"; echo "secret=${GATEWAY_AUTH_TOKEN:-none}"',
      title: 'hello',
    });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(run).toMatchObject({ status: 'completed', number: 1, attempts: 1 });
    expect((await c.api.get('/hecate/v1/tasks/{task_id}', { path: { task_id: taskId } })).data.status).toBe('completed');

    const { data: steps } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/steps', { path: { task_id: taskId, run_id: runId } });
    expect(steps.map((s) => [s.index, s.kind, s.status])).toEqual([
      [1, 'workspace', 'completed'],
      [2, 'shell', 'completed'],
    ]);
    expect(steps[1]).toMatchObject({ tool_name: 'shell_exec', exit_code: 0, input: { argv: ['/bin/sh', '-c', expect.stringContaining('echo hello')] } });
    expect(steps[1].input.env_keys).toEqual(expect.arrayContaining(['HOME', 'PATH']));
    expect(steps[1].input.env_keys).not.toContain('GATEWAY_AUTH_TOKEN');
    expect(
      (await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/steps/{step_id}', { path: { task_id: taskId, run_id: runId, step_id: steps[1].id } })).data.id,
    ).toBe(steps[1].id);

    const { data: artifacts } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts', { path: { task_id: taskId, run_id: runId } });
    const stdout = artifacts.find((a) => a.kind === 'stdout')!;
    const { data: full } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts/{artifact_id}', {
      path: { task_id: taskId, run_id: runId, artifact_id: stdout.id },
    });
    expect(full.content_text).toBe(`hello\nhome=${run.workspace_path}\nsecret=none\n`);
    expect(artifacts.find((a) => a.kind === 'stderr')).toBeDefined();
    expect((await c.api.get('/hecate/v1/tasks/{task_id}/artifacts', { path: { task_id: taskId } })).data.length).toBe(artifacts.length);

    const events = await c.events(taskId, runId);
    expectGapFree(events);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('run.created');
    expect(types).toEqual(
      expect.arrayContaining([
        'run.awaiting_approval',
        'approval.requested',
        'approval.resolved',
        'run.queued',
        'run.started',
        'tool.invoked',
        'tool.started',
        'tool.shell.output_chunk',
        'tool.completed',
      ]),
    );
    expect(types[types.length - 1]).toBe('run.finished');
    expect(events[0]).toMatchObject({ schema_version: 1, task_id: taskId, run_id: runId, sequence: 1, event_id: expect.stringMatching(/^evt_/) });
    expect((await c.events(taskId, runId, 3)).map((e) => e.sequence)[0]).toBe(4);

    const feed = await waitFor(async () => {
      const { data: page } = await c.api.get('/hecate/v1/events', { query: { task_id: taskId, limit: 500 } });
      return page.length === events.length ? page : undefined;
    });
    expect(feed.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    const cursors = feed.map((e) => Number(e.cursor));
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    const { data: finished } = await c.api.get('/hecate/v1/events', { query: { task_id: taskId, event_type: 'run.finished,run.failed' } });
    expect(finished.map((e) => e.type)).toEqual(['run.finished']);
  });

  it('fails the run with the exit status of a failing command, on timeout (timed_out) and past the output cap', async () => {
    const { taskId, runId } = await startApproved({ execution_kind: 'shell', shell_command: 'echo partial; exit 3' });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(run).toMatchObject({ status: 'failed', error_kind: 'exit_status', last_error: 'exit status 3' });
    const { data: steps } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/steps', { path: { task_id: taskId, run_id: runId } });
    expect(steps[1]).toMatchObject({ status: 'failed', exit_code: 3 });
    const events = await c.events(taskId, runId);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['tool.failed', 'run.failed']));
    expect(events[events.length - 1]).toMatchObject({ type: 'run.failed', data: { code: 'exit_status', retriable: false } });

    const slow = await startApproved({ execution_kind: 'shell', shell_command: 'sleep 30', timeout_ms: 300 });
    expect(await c.waitStatus(slow.taskId, slow.runId, ['completed', 'failed'])).toMatchObject({ status: 'failed', error_kind: 'timeout' });
    expect((await c.events(slow.taskId, slow.runId)).map((e) => e.type)).toContain('tool.timed_out');

    const loud = await startApproved({ execution_kind: 'shell', shell_command: 'yes hecate | head -c 300000' });
    expect(await c.waitStatus(loud.taskId, loud.runId, ['completed', 'failed'])).toMatchObject({ status: 'failed', error_kind: 'output_limit_exceeded' });
    const [stdout] = (
      await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts', { path: { task_id: loud.taskId, run_id: loud.runId } })
    ).data.filter((a) => a.kind === 'stdout');
    expect(stdout).toMatchObject({ size_bytes: MAX_OUTPUT, truncated: true });
  });

  it('holds a gated shell run with its exact argv, cwd and env keys; runs only after approve; reject cancels; a late resolve is 409', async () => {
    // The command can write only its workspace (it runs as the sandbox's unprivileged uid).
    const { taskId, runId, run } = await c.startTask({ execution_kind: 'shell', shell_command: 'touch ran' });
    const marker = join(run.workspace_path as string, 'ran');
    expect(run.status).toBe('awaiting_approval');
    const { data: approvals } = await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: taskId } });
    expect(approvals).toHaveLength(1);
    const approval = approvals[0];
    expect(approval).toMatchObject({
      kind: 'shell_command',
      status: 'pending',
      run_id: runId,
      details: { argv: ['/bin/sh', '-c', 'touch ran'], cwd: run.workspace_path, env_keys: expect.arrayContaining(['HOME', 'PATH', 'TERM']) },
    });
    expect(approval.action_summary.join('\n')).toContain('touch ran');
    expect((await c.api.get('/hecate/v1/tasks/{task_id}/approvals/{approval_id}', { path: { task_id: taskId, approval_id: approval.id } })).data).toMatchObject(
      {
        id: approval.id,
      },
    );
    expect((await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/steps', { path: { task_id: taskId, run_id: runId } })).data).toEqual([]);
    expect(existsSync(marker)).toBe(false);

    const { data: resolved } = await c.api.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
      path: { task_id: taskId, approval_id: approval.id },
      body: { decision: 'approve', note: 'looks fine' },
    });
    expect(resolved).toMatchObject({ status: 'approved', resolution_note: 'looks fine' });
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed', number: 1 });
    expect(existsSync(marker)).toBe(true);
    expect(
      (
        await settle(
          c.api.request('post', '/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
            path: { task_id: taskId, approval_id: approval.id },
            body: { decision: 'approve' },
          }),
        )
      ).status,
    ).toBe(409);

    // Reject cancels the same run.
    const second = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    const [a2] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: second.taskId } })).data;
    await c.api.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
      path: { task_id: second.taskId, approval_id: a2.id },
      body: { decision: 'reject', note: 'no' },
    });
    expect(await c.run(second.taskId, second.runId)).toMatchObject({ status: 'cancelled', error_kind: 'approval_rejected' });

    // Cancelling an awaiting run cancels its approval; resolving it afterwards is a conflict.
    const third = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    const [a3] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: third.taskId } })).data;
    expect(
      (await c.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', { path: { task_id: third.taskId, run_id: third.runId }, body: {} })).data.status,
    ).toBe('cancelled');
    expect((await c.api.get('/hecate/v1/tasks/{task_id}/approvals/{approval_id}', { path: { task_id: third.taskId, approval_id: a3.id } })).data).toMatchObject(
      {
        status: 'cancelled',
      },
    );
    const resolveA3 = (decision: string) =>
      settle(
        c.api.request('post', '/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
          path: { task_id: third.taskId, approval_id: a3.id },
          body: { decision } as never,
        }),
      );
    const late = await resolveA3('approve');
    expect(late.status).toBe(409);
    expect(late.body.error.type).toBe('conflict');
    expect((await resolveA3('maybe')).status).toBe(400);
  });

  it('records a file write as an applied patch; revert restores it; drift answers 409', async () => {
    const { taskId, runId } = await c.startTask({ execution_kind: 'file', file_path: 'notes/todo.txt', file_content: 'one\ntwo\n' });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(run.status).toBe('completed');
    const target = join(run.workspace_path, 'notes', 'todo.txt');
    expect(readFileSync(target, 'utf8')).toBe('one\ntwo\n');
    const { data: patches } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches', { path: { task_id: taskId, run_id: runId } });
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({ status: 'applied', path: 'notes/todo.txt', before_existed: false, diff: expect.stringContaining('+one') });
    const id = patches[0].artifact.id as string;
    expect((await c.events(taskId, runId)).map((e) => e.type)).toContain('tool.file.patch');

    // apply needs a proposed patch
    const patchOp = (op: 'apply' | 'revert') =>
      settle(
        c.api.request('post', `/hecate/v1/tasks/{task_id}/runs/{run_id}/patches/{artifact_id}/${op}`, {
          path: { task_id: taskId, run_id: runId, artifact_id: id },
        }),
      );
    expect((await patchOp('apply')).status).toBe(409);
    // drift: the file changed since the patch
    writeFileSync(target, 'edited by hand\n');
    const drift = await patchOp('revert');
    expect(drift.status).toBe(409);
    expect(drift.body.error.type).toBe('conflict');
    writeFileSync(target, 'one\ntwo\n');
    expect((await patchOp('revert')).body.data).toMatchObject({ status: 'reverted' });
    expect(existsSync(target)).toBe(false);
    expect(
      (await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches/{artifact_id}', { path: { task_id: taskId, run_id: runId, artifact_id: id } })).data,
    ).toMatchObject({
      status: 'reverted',
    });
    expect((await patchOp('revert')).status).toBe(409);
    expect((await c.events(taskId, runId)).map((e) => e.type)).toContain('tool.file.reverted');
  });

  /**
   * Rows of the database behind the server: scaled reads Postgres; embedded stops the one process, reads its PGlite
   * directory and starts it again on the same data (the client follows it to its new port).
   */
  const rows = async <R extends Record<string, unknown>>(text: string, params: unknown[]): Promise<R[]> => {
    if (db) return sql<R>(db.url, text, params);
    const running = procs.all.filter((p) => p.proc.exitCode === null && p.proc.signalCode === null);
    for (const p of running) expect(await p.stop('SIGTERM')).toBe(0);
    const found = await queryEmbedded<R>(embedded!.GATEWAY_DATA_DIR, text, params);
    const restarted = await procs.start('all', embedded!);
    c = new Client(restarted.url);
    toolHealthUrl = restarted.url;
    return found;
  };

  /** [type, request_id] of a run's event rows in sequence order (request ids are not part of the event API). */
  const eventOrigins = async (runId: string) =>
    (await rows<{ type: string; request_id: string | null }>('SELECT type, request_id FROM task_run_events WHERE run_id = $1 ORDER BY sequence', [runId])).map(
      (r) => [r.type, r.request_id] as const,
    );

  it('records the request that started a run on the run and its events; the events its worker writes carry the job', async () => {
    const task = await c.createTask({ execution_kind: 'file', file_path: 'origin.txt', file_content: 'o\n' });
    const requestId = `origin-${mode}-${Date.now()}`;
    const started = await settle(
      c.api.request('post', '/hecate/v1/tasks/{task_id}/start', { path: { task_id: task.id }, headers: { 'x-request-id': requestId } }),
    );
    expect(started.status).toBe(200);
    expect(started.body.data.request_id).toBe(requestId);
    const runId = started.body.data.id as string;
    expect(await c.waitStatus(task.id as string, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed', request_id: requestId });
    // Retry and resume record their own request; an external event records the request that posted it.
    const runOp = (op: 'retry' | 'resume', body: { reason?: string }, header: string) =>
      settle(
        c.api.request('post', `/hecate/v1/tasks/{task_id}/runs/{run_id}/${op}`, {
          path: { task_id: task.id, run_id: runId },
          body,
          headers: { 'x-request-id': header },
        }),
      );
    const retried = await runOp('retry', {}, `${requestId}-retry`);
    expect(retried.body.data).toMatchObject({ number: 2, request_id: `${requestId}-retry` });
    await c.waitStatus(task.id as string, retried.body.data.id as string, ['completed', 'failed']);
    const resumed = await runOp('resume', { reason: 'again' }, `${requestId}-resume`);
    expect(resumed.body.data).toMatchObject({ number: 3, request_id: `${requestId}-resume` });
    await c.waitStatus(task.id as string, resumed.body.data.id as string, ['completed', 'failed']);
    const posted = await settle(
      c.api.request('post', '/hecate/v1/tasks/{task_id}/runs/{run_id}/events', {
        path: { task_id: task.id, run_id: runId },
        body: { note: 'from outside' },
        headers: { 'x-request-id': `${requestId}-event` },
      }),
    );
    expect(posted.status).toBe(200);
    const origins = await eventOrigins(runId);
    const of = (type: string) => origins.find(([t]) => t === type)?.[1];
    expect(of('run.created')).toBe(requestId);
    expect(of('run.queued')).toBe(requestId);
    expect(of('run.started')).toMatch(/^job_./);
    expect(of('run.finished')).toBe(of('run.started'));
    expect(of('external.event')).toBe(`${requestId}-event`);
  });

  it('records the request that cancels a run on the events the cancel writes', async () => {
    const requestId = `cancel-${mode}-${Date.now()}`;
    const task = await c.createTask({ execution_kind: 'shell', shell_command: 'true' });
    const started = await settle(
      c.api.request('post', '/hecate/v1/tasks/{task_id}/start', { path: { task_id: task.id }, headers: { 'x-request-id': requestId } }),
    );
    expect(started.body.data).toMatchObject({ status: 'awaiting_approval', request_id: requestId });
    const runId = started.body.data.id as string;
    const cancelled = await settle(
      c.api.request('post', '/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', {
        path: { task_id: task.id, run_id: runId },
        body: { reason: 'origin check' },
        headers: { 'x-request-id': `${requestId}-cancel` },
      }),
    );
    expect(cancelled.status).toBe(200);
    // The run keeps the request that created it; the cancel is recorded on its events.
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', request_id: requestId });
    expect((await c.events(task.id as string, runId)).map((e) => e.type)).toEqual([
      'run.created',
      'run.awaiting_approval',
      'approval.requested',
      'approval.resolved',
      'run.cancelled',
    ]);
    expect(await eventOrigins(runId)).toEqual([
      ['run.created', requestId],
      ['run.awaiting_approval', requestId],
      ['approval.requested', requestId],
      ['approval.resolved', `${requestId}-cancel`],
      ['run.cancelled', `${requestId}-cancel`],
    ]);
  });

  it('records the request that resolves an approval on the events the resolution writes (approve and reject)', async () => {
    const requestId = `resolve-${mode}-${Date.now()}`;
    const approved = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    const resolve = (taskId: string, approvalId: string, decision: 'approve' | 'reject', header: string) =>
      settle(
        c.api.request('post', '/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
          path: { task_id: taskId, approval_id: approvalId },
          body: { decision },
          headers: { 'x-request-id': header },
        }),
      );
    const [gate] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: approved.taskId } })).data;
    const approve = await resolve(approved.taskId, gate.id, 'approve', `${requestId}-approve`);
    expect(approve.status).toBe(200);
    expect(approve.body.data.status).toBe('approved');
    await c.waitStatus(approved.taskId, approved.runId, ['completed', 'failed']);

    const rejected = await c.startTask({ execution_kind: 'shell', shell_command: 'true' });
    const [gate2] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: rejected.taskId } })).data;
    const reject = await resolve(rejected.taskId, gate2.id, 'reject', `${requestId}-reject`);
    expect(reject.status).toBe(200);
    expect(reject.body.data.status).toBe('rejected');
    const of = (rows: (readonly [string, string | null])[], type: string) => rows.filter(([t]) => t === type).map(([, id]) => id);
    const onApproved = await eventOrigins(approved.runId);
    expect(of(onApproved, 'approval.resolved')).toEqual([`${requestId}-approve`]);
    expect(of(onApproved, 'run.queued')).toEqual([`${requestId}-approve`]);
    expect(of(onApproved, 'run.started')).toEqual([expect.stringMatching(/^job_./)]);
    const onRejected = await eventOrigins(rejected.runId);
    expect(of(onRejected, 'approval.resolved')).toEqual([`${requestId}-reject`]);
    expect(of(onRejected, 'run.cancelled')).toEqual([`${requestId}-reject`]);
  });

  it('records the request that reverts or applies a patch on its tool.file event', async () => {
    const requestId = `patch-${mode}-${Date.now()}`;
    const { taskId, runId } = await c.startTask({ execution_kind: 'file', file_path: 'patched.txt', file_content: 'after\n' });
    const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
    expect(run.status).toBe('completed');
    const target = join(run.workspace_path, 'patched.txt');
    const [patch] = (await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches', { path: { task_id: taskId, run_id: runId } })).data;
    const id = patch.artifact.id;
    const patchOp = (op: 'apply' | 'revert', header: string) =>
      settle(
        c.api.request('post', `/hecate/v1/tasks/{task_id}/runs/{run_id}/patches/{artifact_id}/${op}`, {
          path: { task_id: taskId, run_id: runId, artifact_id: id },
          headers: { 'x-request-id': header },
        }),
      );
    const reverted = await patchOp('revert', `${requestId}-revert`);
    expect(reverted.status).toBe(200);
    expect(reverted.body.data.status).toBe('reverted');
    expect(existsSync(target)).toBe(false);
    // No executor proposes a patch yet (the file executor records them applied): mark it proposed to reach apply.
    await rows("UPDATE task_artifacts SET status = 'proposed' WHERE id = $1 RETURNING id", [id]);
    const applied = await patchOp('apply', `${requestId}-apply`);
    expect(applied.status).toBe(200);
    expect(applied.body.data.status).toBe('applied');
    expect(readFileSync(target, 'utf8')).toBe('after\n');
    const origins = await eventOrigins(runId);
    expect(origins.filter(([t]) => t.startsWith('tool.file.'))).toEqual([
      ['tool.file.patch', expect.stringMatching(/^job_./)],
      ['tool.file.reverted', `${requestId}-revert`],
      ['tool.file.applied', `${requestId}-apply`],
    ]);
  });

  it('runs a git command in a copied repository with a git_summary artifact', async () => {
    const repo = join(scratch, `repo-${mode}`);
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: repo,
        env: { PATH: process.env.PATH, HOME: repo, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
      });
    git('init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    const { taskId, runId } = await c.startTask({ execution_kind: 'git', git_command: 'git log --format=%s', working_directory: repo });
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const { data: artifacts } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts', { path: { task_id: taskId, run_id: runId } });
    const byKind = async (kind: string) =>
      (
        await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts/{artifact_id}', {
          path: { task_id: taskId, run_id: runId, artifact_id: artifacts.find((a) => a.kind === kind)!.id },
        })
      ).data.content_text as string;
    expect(await byKind('stdout')).toBe('first\n');
    expect(await byKind('git_summary')).toContain('M a.txt');
  });

  it('resume reuses the workspace with checkpoint context; retry starts from a fresh copy', async () => {
    const { taskId, runId } = await startApproved({ execution_kind: 'shell', shell_command: 'echo x >> log.txt; wc -l < log.txt' });
    await c.waitStatus(taskId, runId, ['completed']);
    const { data: resumed } = await c.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/resume', {
      path: { task_id: taskId, run_id: runId },
      body: { reason: 'again' },
    });
    expect(resumed).toMatchObject({ number: 2, resumed_from_run_id: runId, checkpoint: { source_run_id: runId, reason: 'again' } });
    const approveGateOf = async (rid: string) => {
      const [gate] = (await c.api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: taskId } })).data.filter((a) => a.run_id === rid);
      await c.api.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
        path: { task_id: taskId, approval_id: gate.id },
        body: { decision: 'approve' },
      });
    };
    await approveGateOf(resumed.id);
    const done = await c.waitStatus(taskId, resumed.id as string, ['completed', 'failed']);
    expect(done.workspace_path).toBe((await c.run(taskId, runId)).workspace_path);
    const out = async (rid: string) => {
      const arts = (await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts', { path: { task_id: taskId, run_id: rid } })).data;
      const stdout = arts.find((a) => a.kind === 'stdout')!;
      return (
        await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts/{artifact_id}', { path: { task_id: taskId, run_id: rid, artifact_id: stdout.id } })
      ).data.content_text as string;
    };
    expect((await out(resumed.id as string)).trim()).toBe('2');
    const { data: steps } = await c.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/steps', { path: { task_id: taskId, run_id: resumed.id } });
    expect(steps[1].input.checkpoint).toMatchObject({ source_run_id: runId, last_completed_step_index: 2, last_event_sequence: expect.any(Number) });
    const events = await c.events(taskId, resumed.id as string);
    expect(events[1]).toMatchObject({ type: 'run.resumed_from_event', data: { from_run_id: runId, reason: 'again' } });

    const { data: retried } = await c.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/retry', { path: { task_id: taskId, run_id: resumed.id }, body: {} });
    await approveGateOf(retried.id);
    await c.waitStatus(taskId, retried.id as string, ['completed']);
    expect((await out(retried.id as string)).trim()).toBe('1');
    expect((await c.api.get('/hecate/v1/tasks/{task_id}/runs', { path: { task_id: taskId } })).data.map((r) => r.number)).toEqual([1, 2, 3]);
  });

  it('cancel kills the running command; one active run per task; delete waits for it; terminal cancel is 409', async () => {
    const { taskId, runId, run } = await startApproved({ execution_kind: 'shell', shell_command: 'echo $$ > pid; echo started; sleep 60' });
    const pidFile = join(run.workspace_path as string, 'pid');
    await waitFor(async () => existsSync(pidFile) && (await c.events(taskId, runId)).some((e) => e.type === 'tool.shell.output_chunk'), {
      what: 'command running',
    });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => pidAlive(pid);
    expect(alive()).toBe(true);
    const busy = await settle(c.api.request('post', '/hecate/v1/tasks/{task_id}/start', { path: { task_id: taskId } }));
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ type: 'conflict', latest_run_id: runId, run_status: 'running' });
    const deleteTask = () => settle(c.api.request('delete', '/hecate/v1/tasks/{task_id}', { path: { task_id: taskId } }));
    expect((await deleteTask()).status).toBe(409);

    const { data: cancelled } = await c.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', {
      path: { task_id: taskId, run_id: runId },
      body: { reason: 'stop' },
    });
    expect(cancelled.status).toBe('cancelled');
    expect((await c.api.get('/hecate/v1/tasks/{task_id}', { path: { task_id: taskId } })).data.status).toBe('cancelled');
    const events = await c.events(taskId, runId);
    expectGapFree(events);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['run.cancelled', 'tool.cancelled']));
    expect(events.filter((e) => ['run.finished', 'run.failed', 'run.cancelled'].includes(e.type as string))).toHaveLength(1);
    // The worker killed the command's process group.
    await waitFor(() => !alive(), { what: `pid ${pid} to be killed` });
    expect(
      (await settle(c.api.request('post', '/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', { path: { task_id: taskId, run_id: runId }, body: {} }))).status,
    ).toBe(409);
    expect((await deleteTask()).status).toBe(204);
    expect((await settle(c.api.request('get', '/hecate/v1/tasks/{task_id}', { path: { task_id: taskId } }))).status).toBe(404);
    expect((await settle(c.api.request('get', '/hecate/v1/tasks/{task_id}/runs/{run_id}/events', { path: { task_id: taskId, run_id: runId } }))).status).toBe(
      404,
    );
  });

  it('refuses every path that leaves the workspace or the allowed root', async () => {
    const root = join(scratch, `root-${mode}`);
    const outside = join(scratch, `outside-${mode}`);
    mkdirSync(join(root, 'proj'), { recursive: true });
    mkdirSync(outside);
    mkdirSync(`${root}-sibling`);
    symlinkSync(outside, join(root, 'proj', 'escape'));
    const bad = async (dto: Json) => {
      const r = await settle(c.api.request('post', '/hecate/v1/tasks', { body: dto }));
      expect({ status: r.status, type: r.body.error?.type }).toEqual({ status: 400, type: 'invalid_request' });
    };
    await bad({ execution_kind: 'file', file_path: '../escape.txt', file_content: 'x' });
    await bad({ execution_kind: 'file', file_path: '/etc/hecate.txt', file_content: 'x' });
    await bad({ execution_kind: 'shell', shell_command: 'true', workspace_mode: 'in_place', working_directory: outside, sandbox_allowed_root: root });
    await bad({ execution_kind: 'shell', shell_command: 'true', workspace_mode: 'in_place', working_directory: `${root}-sibling`, sandbox_allowed_root: root });
    await bad({
      execution_kind: 'shell',
      shell_command: 'true',
      workspace_mode: 'in_place',
      working_directory: join(root, 'proj', 'escape'),
      sandbox_allowed_root: root,
    });
    await bad({ execution_kind: 'shell', shell_command: 'true', workspace_mode: 'in_place' });
    await bad({
      execution_kind: 'file',
      file_path: 'escape/new.txt',
      file_content: 'x',
      workspace_mode: 'in_place',
      working_directory: join(root, 'proj'),
      sandbox_allowed_root: root,
    });
    await bad({ execution_kind: 'file', file_path: 'proj/../../x', file_content: 'x', workspace_mode: 'in_place', working_directory: join(root, 'proj') });
    await bad({ execution_kind: 'teleport' });
    await bad({ execution_kind: 'shell' });

    // A copied workspace keeps the symlink; the runtime resolver refuses the write through it.
    const { taskId, runId } = await c.startTask({
      execution_kind: 'file',
      file_path: 'escape/new.txt',
      file_content: 'x',
      working_directory: join(root, 'proj'),
    });
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'failed', error_kind: 'invalid_path' });
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);

    // in_place inside the allowed root works.
    const ok = await c.startTask({
      execution_kind: 'file',
      file_path: 'inside.txt',
      file_content: 'ok',
      workspace_mode: 'in_place',
      working_directory: join(root, 'proj'),
      sandbox_allowed_root: root,
    });
    expect(await c.waitStatus(ok.taskId, ok.runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(readFileSync(join(root, 'proj', 'inside.txt'), 'utf8')).toBe('ok');
  });

  it('reports sandbox isolation in /healthz and the runtime in system stats; lists and filters tasks', async () => {
    const health = (await (await fetch(`${toolHealthUrl}/healthz`)).json()) as Json;
    if (mode === 'scaled') expect(((await (await fetch(`${c.url}/healthz`)).json()) as Json).sandbox).toBeUndefined();
    expect(health.sandbox).toEqual({
      os_isolation: false,
      layer: 'none',
      commands: 'allowed',
      run_as: process.getuid?.() === 0 ? 'uid 65534' : 'server user',
      limits: expect.any(Object),
    });
    const { data: stats } = await c.api.get('/hecate/v1/system/stats');
    expect(stats.task_runtime).toMatchObject({
      runs_queued: expect.any(Number),
      runs_running: expect.any(Number),
      lease_seconds: 30,
      approval_policies: ['shell_exec'],
    });
    expect(stats.sse).toMatchObject({ slow_consumer_disconnects: expect.any(Number) });
    const { data: completed } = await c.api.get('/hecate/v1/tasks', { query: { status: 'completed', limit: 2 } });
    expect(completed.length).toBeLessThanOrEqual(2);
    expect(completed.every((t) => t.status === 'completed')).toBe(true);
    const file = await c.createTask({ execution_kind: 'file', file_path: 'kind.txt', file_content: 'x' });
    const shell = await c.createTask({ execution_kind: 'shell', shell_command: 'true' });
    const { data: files } = await c.api.get('/hecate/v1/tasks', { query: { execution_kind: 'file', limit: 200 } });
    expect(files.map((t) => t.id)).toContain(file.id);
    expect(files.map((t) => t.id)).not.toContain(shell.id);
    expect(files.every((t) => t.execution_kind === 'file')).toBe(true);
    expect((await settle(c.api.request('get', '/hecate/v1/tasks/{task_id}', { path: { task_id: 'task_nope' } }))).status).toBe(404);
  });

  if (mode === 'embedded') {
    it('refuses to start with an unknown approval policy name', async () => {
      const proc = await startServer('all', embeddedTasksEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec,rm_rf' }), { waitHealthy: false });
      const exited = await proc.exited;
      expect(exited.code).toBe(1);
      expect(proc.output()).toContain('GATEWAY_TASK_APPROVAL_POLICIES: unknown policy rm_rf');
    });
  }
});
