import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

/**
 * Issue 27: the seeds' variables that have no meaning here and misspelt `GATEWAY_*` / `HECATE_*` names are named once at
 * startup by every role (api, worker, all-in-one) through the structured logger, never with their values; the API contract's
 * `HECATE_AGENT_ADAPTERS_DIR` is read as the adapters directory.
 */
describe('configuration warnings at startup', () => {
  const procs = new Processes();
  // Distinctive values: none of them may reach the output.
  const values = {
    GATEWAY_TASK_MAX_CONCURENT: 'val-concurent-7f3a91',
    GATEWAY_TASKS_BACKEND: 'val-tasks-backend-51c2',
    GATEWAY_TASK_QUEUE_BACKEND: 'val-queue-backend-9d04',
    GATEWAY_CHAT_SESSIONS_BACKEND: 'val-chat-backend-3be7',
    GATEWAY_TASK_QUEUE_BUFFER: '917263',
    HECATE_TASK_MAX_CONCURRENT: 'val-hecate-prefix-66aa',
    GATEWAY_ENTIRELY_MADE_UP_SETTING: 'val-made-up-0c1d',
    SAGE_TOOL_PROGRESS_ENABLED: 'val-sage-4e2f',
  };
  const expected: Json[] = [
    { variable: 'GATEWAY_CHAT_SESSIONS_BACKEND', replaced_by: expect.stringMatching(/always stored in the database/) },
    { variable: 'GATEWAY_ENTIRELY_MADE_UP_SETTING' },
    { variable: 'GATEWAY_TASKS_BACKEND', replaced_by: expect.stringMatching(/GATEWAY_DATA_DIR .*DATABASE_URL/) },
    { variable: 'GATEWAY_TASK_MAX_CONCURENT', did_you_mean: 'GATEWAY_TASK_MAX_CONCURRENT' },
    { variable: 'GATEWAY_TASK_QUEUE_BACKEND', replaced_by: expect.stringMatching(/in-process in embedded mode, BullMQ on REDIS_URL/) },
    { variable: 'GATEWAY_TASK_QUEUE_BUFFER', replaced_by: expect.stringMatching(/GATEWAY_TASK_QUEUE_WORKERS .*GATEWAY_TASK_MAX_CONCURRENT/) },
    { variable: 'HECATE_TASK_MAX_CONCURRENT', did_you_mean: 'GATEWAY_TASK_MAX_CONCURRENT' },
    { variable: 'SAGE_TOOL_PROGRESS_ENABLED', replaced_by: expect.stringMatching(/^GATEWAY_TOOL_PROGRESS_ENABLED /) },
  ];

  /** The JSON log lines of the process that carry a configuration warning. */
  const warningsOf = (p: ServerProcess): Json[] =>
    p
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Json)
      .filter((line) => line.config_warning === true);

  const expectWarned = (p: ServerProcess): void => {
    const lines = warningsOf(p);
    // Once each, at warn level, names only.
    expect(
      lines.map((l) => ({
        variable: l.variable,
        ...(l.did_you_mean ? { did_you_mean: l.did_you_mean } : {}),
        ...(l.replaced_by ? { replaced_by: l.replaced_by } : {}),
      })),
    ).toEqual(expected);
    expect(lines.every((l) => l.level === 'warn' && typeof l.msg === 'string' && l.msg.includes(l.variable))).toBe(true);
    expect(lines.find((l) => l.variable === 'GATEWAY_TASK_MAX_CONCURENT')!.msg).toBe(
      'unknown configuration variable GATEWAY_TASK_MAX_CONCURENT: did you mean GATEWAY_TASK_MAX_CONCURRENT?',
    );
    for (const value of Object.values(values)) expect(p.output()).not.toContain(value);
  };

  afterAll(() => procs.stopAll());

  it('api and worker processes (scaled) each warn once, naming the nearest known name or what replaces a seed variable', async () => {
    const { env } = await scaledEnv({ ...values });
    const [api, worker] = await Promise.all([procs.start('api', env), procs.start('worker', env)]);
    expectWarned(api);
    expectWarned(worker);
    // Reference-system variables without a meaning change nothing: the queue is BullMQ, as the mode says.
    const stats = await new Client(api.url).ok('GET', '/hecate/v1/system/stats');
    expect(stats).toMatchObject({ queue_backend: 'bullmq', storage_backend: 'postgres' });
  }, 120_000);

  it('the all-in-one process warns once too, and reads HECATE_AGENT_ADAPTERS_DIR (the seed name) as the adapters directory', async () => {
    const adaptersDir = mkdtempSync(join(tmpdir(), 'hecate-seed-adapters-'));
    const all = await procs.start('all', embeddedTasksEnv({ ...values, HECATE_AGENT_ADAPTERS_DIR: adaptersDir }));
    expectWarned(all);
    expect(all.output()).not.toContain('HECATE_AGENT_ADAPTERS_DIR');

    // refresh-launcher writes the managed launcher into that directory, and the catalog finds it there.
    const c = new Client(all.url);
    const r = await c.call('POST', '/hecate/v1/agent-adapters/claude_code/refresh-launcher');
    expect(r.status).toBe(200);
    const launcher = join(adaptersDir, 'claude-agent-acp');
    expect(r.body.data).toEqual([expect.objectContaining({ id: 'claude_code', managed: true, available: true, path: launcher })]);
    expect(readFileSync(launcher, 'utf8')).toMatch(/^#!\/bin\/sh\n/);
    expect(existsSync(join(adaptersDir, 'claude-agent-acp'))).toBe(true);
  }, 120_000);

  it('refuses to start when the seed name and the project name point at two different directories', async () => {
    const env = embeddedTasksEnv({ HECATE_AGENT_ADAPTERS_DIR: '/tmp/hecate-a', GATEWAY_AGENT_ADAPTERS_DIR: '/tmp/hecate-b' });
    await expect(procs.start('all', env)).rejects.toThrow(/HECATE_AGENT_ADAPTERS_DIR: GATEWAY_AGENT_ADAPTERS_DIR names another directory/);
  }, 60_000);
});
