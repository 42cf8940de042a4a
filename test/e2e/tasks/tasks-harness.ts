import { embeddedStackEnv, scaledStackEnv } from '../../support/harness';
import { type ScratchDatabase, waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { HecateClient } from '@sdk';
import { HttpClient } from '../../support/http';
import { sdkClient } from '../../support/sdk';
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
    return (await this.api.post('/hecate/v1/tasks/{task_id}/start', { path: { task_id: taskId } })).data;
  }

  async run(taskId: string, runId: string): Promise<Json> {
    return (await this.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}', { path: { task_id: taskId, run_id: runId } })).data;
  }

  async events(taskId: string, runId: string, after = 0): Promise<Json[]> {
    return (
      await this.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/events', {
        path: { task_id: taskId, run_id: runId },
        query: { after_sequence: String(after) },
      })
    ).data;
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

/**
 * The takeover suites' deployment: a fake local provider, no approvals, a short lease (`leaseMs`) with the
 * reconciler and the queue lock fast enough that a killed worker's run moves within a couple of leases.
 */
export const takeoverEnv = (upstream: { url: string }, leaseMs: number): Record<string, string> => ({
  ...providerEnv('fake', upstream, { kind: 'local' }),
  GATEWAY_TASK_APPROVAL_POLICIES: 'none',
  GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(leaseMs / 1000),
  GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
  GATEWAY_QUEUE_LOCK_MS: '2000',
});

/** Environment of a scaled deployment (test/support/harness.ts) with this suite's token, migrated. */
export function scaledEnv(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; db: ScratchDatabase }> {
  return scaledStackEnv({ token: TOKEN, env: extra });
}

/** Environment of an embedded deployment (test/support/harness.ts) with this suite's token. */
export function embeddedTasksEnv(extra: Record<string, string> = {}): Record<string, string> {
  return embeddedStackEnv({ token: TOKEN, env: extra });
}

/** Processes started and stopped together: the support harness's group. */
export { ProcessGroup as Processes } from '../../support/harness';

/**
 * A reply the fake upstream streams one word per delta (`n` deltas): with `chunkIntervalMs: 100` it lasts n × 100 ms, so a
 * stream a test interrupts outlasts a worker's start on a loaded machine (explicit content yields at most one delta per character).
 */
export const slowReply = (tag: string, n: number): string => Array.from({ length: n }, (_, i) => `${tag}${i} `).join('');
