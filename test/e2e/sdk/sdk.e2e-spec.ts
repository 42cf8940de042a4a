import { HecateError, type HecateClient, type RunStreamFrame, type Schemas } from '@sdk';
import type { ScratchDatabase } from '../../support/infra';
import { waitFor } from '../../support/infra';
import { sdkClient } from '../../support/sdk';
import { freePort, startServer, type ServerProcess } from '../../support/server-process';
import { scaledEnv, TOKEN } from '../tasks/tasks-harness';

/**
 * The SDK (libs/sdk) against the built server in scaled mode, where the api process can go away under a stream while
 * the worker goes on running the run: stream resumption across an api shutdown and an api crash, retries across a
 * restart, and errors as HecateError.
 */
describe('SDK against the built server (scaled)', () => {
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let port: number;
  let api: ServerProcess;
  let worker: ServerProcess;
  /** Last-Event-ID of every stream connection the SDK opened, by path. */
  const connections: Array<{ path: string; lastEventId: string | null; status: number }> = [];
  let hecate: HecateClient;

  /** Requests the SDK made that found nothing listening (the api stopped). */
  let refused = 0;
  const countingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init).catch((err: unknown) => {
      refused++;
      throw err;
    });
    const headers = new Headers(init?.headers);
    if (headers.get('accept') === 'text/event-stream') {
      connections.push({ path: new URL(String(input)).pathname, lastEventId: headers.get('last-event-id'), status: res.status });
    }
    return res;
  };

  /** Stops the api (SIGTERM: streams end with `event: reconnect`; SIGKILL: sockets just die) and starts it again. */
  const restartApi = async (signal: NodeJS.Signals) => {
    await api.stop(signal);
    api = await startServer('api', env, { port, timeoutMs: 60_000 });
  };

  beforeAll(async () => {
    ({ env, db } = await scaledEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none', GATEWAY_TASK_SANDBOX: 'none' }));
    port = await freePort();
    [api, worker] = await Promise.all([startServer('api', env, { port, timeoutMs: 60_000 }), startServer('worker', env, { timeoutMs: 60_000 })]);
    hecate = sdkClient(api.url, TOKEN, {
      fetch: countingFetch,
      retry: { retries: 30, initialDelayMs: 100, maxDelayMs: 1000 },
      reconnect: { initialDelayMs: 100, maxDelayMs: 1000, maxAttempts: 200 },
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([api?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
    await db?.drop();
  });

  it('reads a run stream and the events feed across an api shutdown and an api crash: every event once, in order', async () => {
    const { data: task } = await hecate.post('/hecate/v1/tasks', {
      body: { execution_kind: 'shell', title: 'slow counter', shell_command: 'for i in $(seq 1 100); do echo line $i; sleep 0.2; done' },
    });
    const { data: run } = await hecate.post('/hecate/v1/tasks/{task_id}/start', { path: { task_id: task.id } });

    const feed: Schemas['EventEnvelope'][] = [];
    const frames: RunStreamFrame[] = [];
    const reading = Promise.all([
      (async () => {
        for await (const e of hecate.streams.events({ taskId: task.id })) {
          feed.push(e);
          if (e.type === 'run.finished' || e.type === 'run.failed') return;
        }
      })(),
      (async () => {
        for await (const frame of hecate.streams.run(task.id, run.id)) frames.push(frame);
      })(),
    ]);
    // Cut twice while the command still runs on the worker — a graceful shutdown, then a crash — each time once both
    // streams have delivered since the last cut (so each of them is cut twice).
    const cutAt: number[] = [];
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const since = { frames: frames.length, feed: feed.length };
      await waitFor(() => (frames.length >= since.frames + 4 && feed.length >= since.feed + 4 ? true : undefined), { what: 'both streams reading' });
      expect(frames.at(-1)!.data.run.status).toBe('running');
      cutAt.push(frames.length);
      await restartApi(signal);
    }
    await reading;

    const snapshots = frames.filter((f) => f.event === 'snapshot');
    const last = frames[frames.length - 1];
    expect(last.event).toBe('done');
    expect(snapshots.map((f) => f.sequence)).toEqual(snapshots.map((_, i) => i + 1));
    expect(last.sequence).toBe(snapshots.length);
    expect(last.data.run.status).toBe('completed');
    expect(cutAt).toHaveLength(2);
    expect(frames.length).toBeGreaterThan(cutAt[1] + 1);

    // What the stream delivered is exactly the run's event list, and so is the feed.
    const { data: events } = await hecate.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/events', {
      path: { task_id: task.id, run_id: run.id },
      query: { limit: '1000' },
    });
    expect(snapshots.map((f) => f.data.event?.event_id)).toEqual(events.map((e) => e.event_id));
    expect(feed.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    expect(events.filter((e) => e.type === 'tool.shell.output_chunk').length).toBeGreaterThan(5);

    // It resumed: each reconnection sent the sequence of the last frame it had delivered.
    const runConnections = connections.filter((c) => c.path.endsWith(`/runs/${run.id}/stream`) && c.status === 200);
    expect(runConnections.length).toBeGreaterThanOrEqual(3);
    expect(runConnections[0].lastEventId).toBe('0');
    for (const c of runConnections.slice(1)) expect(Number(c.lastEventId)).toBeGreaterThan(0);
    const feedConnections = connections.filter((c) => c.path === '/hecate/v1/events/stream' && c.status === 200);
    expect(feedConnections.length).toBeGreaterThanOrEqual(3);
  });

  it('retries a read while the api is down and answers once it is back', async () => {
    await api.stop('SIGKILL');
    const refusedBefore = refused;
    const restarted = (async () => {
      // The api comes back only once the read has failed against it at least once (so the SDK retried it).
      await waitFor(() => refused > refusedBefore, { what: 'the read to find the api down' });
      api = await startServer('api', env, { port, timeoutMs: 60_000 });
    })();
    const { data: tasks } = await hecate.get('/hecate/v1/tasks', { query: { limit: 5 } });
    await restarted;
    expect(tasks.length).toBeGreaterThan(0);
  });

  it('throws refusals as HecateError with the seed error type, request id and operator action', async () => {
    const missing = (await hecate.get('/hecate/v1/tasks/{task_id}', { path: { task_id: 'task_missing' } }).catch((e: unknown) => e)) as HecateError;
    expect(missing).toBeInstanceOf(HecateError);
    expect({ status: missing.status, type: missing.type }).toEqual({ status: 404, type: 'not_found' });
    expect(missing.request_id).toMatch(/^req_/);
    expect(missing.operator_action).not.toBe('');

    const invalid = (await hecate
      .post('/hecate/v1/tasks', { body: { execution_kind: 'shell', shell_command: 'true', timeout_ms: -1 } })
      .catch((e: unknown) => e)) as HecateError;
    expect({ status: invalid.status, type: invalid.type }).toEqual({ status: 400, type: 'invalid_request' });
    expect(invalid.message).toContain('timeout_ms');

    const anonymous = (await sdkClient(api.url, null)
      .get('/hecate/v1/tasks')
      .catch((e: unknown) => e)) as HecateError;
    expect({ status: anonymous.status, type: anonymous.type }).toEqual({ status: 401, type: 'unauthorized' });

    // A stream of a run that does not exist fails at once (a 404 is not retried).
    const stream = hecate.streams.run('task_missing', 'run_missing');
    await expect(stream.next()).rejects.toMatchObject({ name: 'HecateError', status: 404, type: 'not_found' });
  });
});
