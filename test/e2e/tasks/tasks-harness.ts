import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, ScratchDatabase, testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import type { HecateClient } from '@sdk';
import { HttpClient } from '../../support/http';
import { sdkClient } from '../../support/sdk';
import { embeddedEnv, runMigrate, ServerProcess, startServer } from '../../support/server-process';
import { SseReader } from '../../support/sse';
export type { SseFrame } from '../../support/sse';

export const TOKEN = 'tasks-e2e-operator-token-0123456789';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The support HTTP client with the task runtime's calls, made through the SDK (`api`: libs/sdk, typed from the
 * server's OpenAPI document); `call`/`ok` stay for requests a test shapes by hand (raw bodies, odd headers).
 */
export class Client extends HttpClient {
  readonly api: HecateClient;

  constructor(url: string, token = TOKEN) {
    super(url, token);
    // One request per call, as the suites' fault tests expect (the SDK's own retries are tested in e2e/sdk).
    this.api = sdkClient(url, token, { retry: { retries: 0 } });
  }

  async createTask(dto: Json): Promise<Json> {
    return (await this.api.post('/hecate/v1/tasks', { body: dto })).data;
  }

  async start(taskId: string): Promise<Json> {
    return (await this.api.post('/hecate/v1/tasks/{id}/start', { path: { id: taskId } })).data;
  }

  async run(taskId: string, runId: string): Promise<Json> {
    return (await this.api.get('/hecate/v1/tasks/{id}/runs/{runId}', { path: { id: taskId, runId } })).data;
  }

  async events(taskId: string, runId: string, after = 0): Promise<Json[]> {
    return (await this.api.get('/hecate/v1/tasks/{id}/runs/{runId}/events', { path: { id: taskId, runId }, query: { after_sequence: String(after) } })).data;
  }

  async waitStatus(taskId: string, runId: string, statuses: string[], timeoutMs = 30_000): Promise<Json> {
    return waitFor(
      async () => {
        const run = await this.run(taskId, runId);
        return statuses.includes(run.status as string) ? run : undefined;
      },
      { timeoutMs, intervalMs: 50, what: `run ${runId} to be ${statuses.join('|')}` },
    );
  }

  /** Creates and starts a task; resolves with the task and run ids. */
  async startTask(dto: Json): Promise<{ taskId: string; runId: string; run: Json }> {
    const task = await this.createTask(dto);
    const run = await this.start(task.id as string);
    return { taskId: task.id as string, runId: run.id as string, run };
  }
}

/** Whether a process (e.g. a task's command, by the pid it wrote) is still alive. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sequences must be 1..n with no gap and no duplicate, and event ids unique. */
export function expectGapFree(events: Json[]): void {
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
  expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
}

/** The support SSE reader with this suite's credential. */
export class SseClient extends SseReader {
  constructor(url: string, headers: Record<string, string> = {}, token = TOKEN) {
    super(url, { headers, token });
  }
}

/** Environment of a scaled deployment on a scratch database and a Redis key prefix. */
export async function scaledEnv(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; db: ScratchDatabase }> {
  const db = await createScratchDatabase();
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    GATEWAY_REDIS_PREFIX: uniqueId('tk'),
    GATEWAY_AUTH_TOKEN: TOKEN,
    GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-ws-')),
    ...extra,
  };
  const migrated = await runMigrate(env);
  if (migrated.code !== 0) throw new Error(`migrate failed:\n${migrated.output}`);
  return { env, db };
}

export function embeddedTasksEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...embeddedEnv(), GATEWAY_AUTH_TOKEN: TOKEN, GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-ws-')), ...extra };
}

/** Tracks started processes so a suite can stop them all. */
export class Processes {
  readonly all: ServerProcess[] = [];

  async start(role: 'all' | 'api' | 'worker', env: Record<string, string | undefined>): Promise<ServerProcess> {
    const p = await startServer(role, env, { timeoutMs: 60_000 });
    this.all.push(p);
    return p;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.all.map((p) => p.stop('SIGKILL')));
  }
}
