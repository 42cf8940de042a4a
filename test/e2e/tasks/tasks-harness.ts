import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, ScratchDatabase, testRedisUrl, uniqueId, waitFor } from '../../support/infra';
import { embeddedEnv, runMigrate, ServerProcess, startServer } from '../../support/server-process';

export const TOKEN = 'tasks-e2e-operator-token-0123456789';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A small client for /hecate/v1 with one credential. */
export class Client {
  constructor(
    readonly url: string,
    readonly token = TOKEN,
  ) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  async ok(method: string, path: string, body?: unknown): Promise<Json> {
    const r = await this.call(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.data as Json;
  }

  createTask(dto: Json) {
    return this.ok('POST', '/hecate/v1/tasks', dto);
  }

  start(taskId: string) {
    return this.ok('POST', `/hecate/v1/tasks/${taskId}/start`);
  }

  run(taskId: string, runId: string) {
    return this.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}`);
  }

  async events(taskId: string, runId: string, after = 0): Promise<Json[]> {
    return (await this.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/events?after_sequence=${after}`)) as unknown as Json[];
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

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** A raw SSE client (node:http) that records frames and comments; `close()` disconnects. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  status = 0;
  ended = false;
  private buffer = '';
  private req: ReturnType<typeof request> | undefined;
  readonly opened: Promise<void>;
  readonly done: Promise<void>;

  constructor(url: string, headers: Record<string, string> = {}, token = TOKEN) {
    let resolveOpen!: () => void;
    let resolveDone!: () => void;
    this.opened = new Promise((r) => (resolveOpen = r));
    this.done = new Promise((r) => (resolveDone = r));
    this.req = request(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } }, (res) => {
      this.status = res.statusCode ?? 0;
      resolveOpen();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.feed(chunk));
      res.on('end', () => {
        this.ended = true;
        resolveDone();
      });
      res.on('error', () => {
        this.ended = true;
        resolveDone();
      });
    });
    this.req.on('error', () => {
      this.ended = true;
      resolveOpen();
      resolveDone();
    });
    this.req.end();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let idx: number;
    while ((idx = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, idx);
      this.buffer = this.buffer.slice(idx + 2);
      const frame: SseFrame = { data: '' };
      let isComment = true;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        isComment = false;
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
        else if (field === 'data') frame.data += value;
      }
      if (!isComment) this.frames.push(frame);
    }
  }

  json(i: number): Json {
    return JSON.parse(this.frames[i].data) as Json;
  }

  waitFrames(n: number, timeoutMs = 20_000): Promise<SseFrame[]> {
    return waitFor(() => (this.frames.length >= n ? this.frames : undefined), { timeoutMs, what: `${n} SSE frames (have ${this.frames.length})` });
  }

  close(): void {
    this.req?.destroy();
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
