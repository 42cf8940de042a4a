import { Client, embeddedTasksEnv, Processes } from './tasks-harness';

/**
 * GATEWAY_TASK_APPROVAL_POLICIES as docs/api.md §4 defines it: unset keeps the default gates (shell_exec, git_exec,
 * file_write); an empty value disables every gate, like `none` — the one variable where empty is not "unset".
 */
describe('approval policies from the environment', () => {
  const procs = new Processes();
  afterAll(() => procs.stopAll());

  const shellRun = async (env: Record<string, string>) => {
    const server = await procs.start('all', embeddedTasksEnv(env));
    const c = new Client(server.url);
    const { taskId, runId, run } = await c.startTask({ execution_kind: 'shell', shell_command: 'echo gated?' });
    return { c, taskId, runId, run };
  };

  it('unset: a shell task waits for its approval', async () => {
    const { run } = await shellRun({});
    expect(run.status).toBe('awaiting_approval');
  });

  it('empty: no gate, the shell task runs at once', async () => {
    const { c, taskId, runId, run } = await shellRun({ GATEWAY_TASK_APPROVAL_POLICIES: '' });
    expect(run.status).not.toBe('awaiting_approval');
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(await c.ok('GET', `/hecate/v1/tasks/${taskId}/approvals`)).toEqual([]);
  });
});
