import { get, type IncomingMessage } from 'node:http';
import { connect, Socket } from 'node:net';
import type { ScratchDatabase } from '../../support/infra';
import { waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { Client, expectGapFree, Json, Processes, scaledEnv, SseClient, TOKEN } from './tasks-harness';

interface FeedFrame {
  id: number;
  eventId: string;
  batch: number;
}

/** Parses a feed stream's frames as they arrive (the SSE id, the event's id, the batch number the test posted it in). */
function collectFrames(res: IncomingMessage, into: FeedFrame[]): void {
  let buffered = '';
  res.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const id = /^id: (\d+)$/m.exec(frame);
      const data = /^data: (.*)$/m.exec(frame);
      if (!id || !data) continue;
      const e = JSON.parse(data[1]).data as Json;
      into.push({ id: Number(id[1]), eventId: e.event_id as string, batch: (e.data as Json).data.i as number });
    }
  });
}

/** A GET of the feed stream of one task's external events from `lastEventId`, answered. */
async function openFeed(c: Client, taskId: string, lastEventId: number) {
  const req = get(`${c.url}/hecate/v1/events/stream?task_id=${taskId}&event_type=external.event`, {
    headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': String(lastEventId) },
  });
  const res = await new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
  return { req, res };
}

/**
 * Scaled deployment: two api processes and a worker. SSE resume, cross-process delivery through Redis,
 * cursor errors, the public feed's cursor under concurrent writers, and slow consumers.
 */
describe('task event streams (scaled, two api processes)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let a: Client;
  let b: Client;
  let apiB: ServerProcess;

  beforeAll(async () => {
    const s = await scaledEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none', GATEWAY_SSE_HEARTBEAT_INTERVAL: '300ms' });
    db = s.db;
    const [apiA, , second] = await Promise.all([procs.start('api', s.env), procs.start('worker', s.env), procs.start('api', s.env)]);
    apiB = second;
    a = new Client(apiA.url);
    b = new Client(apiB.url);
  });
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  const streamUrl = (c: Client, taskId: string, runId: string, query = '') => `${c.url}/hecate/v1/tasks/${taskId}/runs/${runId}/stream${query}`;

  it('resumes a run stream on another api process with Last-Event-ID: events n+1… exactly once, in order, then done', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'for i in 1 2 3 4 5 6 7 8; do echo line-$i; sleep 0.25; done' });
    const first = new SseClient(streamUrl(a, taskId, runId));
    await first.opened;
    expect(first.status).toBe(200);
    await first.waitFrames(6);
    first.close();
    const seen = first.frames.slice(0, 6);
    const n = Number(seen[5].id);
    expect(seen.map((f) => Number(f.id))).toEqual([1, 2, 3, 4, 5, 6]);

    const second = new SseClient(streamUrl(b, taskId, runId), { 'last-event-id': String(n) });
    await second.done;
    const rest = second.frames;
    expect(rest[rest.length - 1].event).toBe('done');
    const snapshots = rest.filter((f) => f.event === 'snapshot');
    expect(snapshots.map((f) => Number(f.id))).toEqual(snapshots.map((_, i) => n + 1 + i));
    const all = [...seen, ...snapshots].map((f) => JSON.parse(f.data).data as Json);
    const events = await a.events(taskId, runId);
    expectGapFree(events);
    expect(all.map((d) => d.event.event_id)).toEqual(events.map((e) => e.event_id));
    const last = all[all.length - 1];
    expect(last).toMatchObject({ event_type: 'run.finished', terminal: true, run: { id: runId, status: 'completed' } });
    expect(last.steps.map((s: Json) => s.status)).toEqual(['completed', 'completed']);
    expect(last.activity.map((i: Json) => i.type)).toEqual(expect.arrayContaining(['tool_call', 'run_result']));
    expect(last.approvals).toEqual([]);

    // Reconnecting at the end gets `done` at once; after_sequence wins over Last-Event-ID.
    const end = new SseClient(streamUrl(a, taskId, runId, `?after_sequence=${events.length}`), { 'last-event-id': '1' });
    await end.done;
    expect(end.frames.map((f) => f.event)).toEqual(['done']);
  });

  it('tails a running run on one api process while the worker writes and another api process cancels it; done at the end', async () => {
    const { taskId, runId } = await b.startTask({ execution_kind: 'shell', shell_command: 'echo go; sleep 30' });
    const sse = new SseClient(streamUrl(a, taskId, runId));
    await waitFor(() => sse.frames.some((f) => JSON.parse(f.data).data.event_type === 'tool.shell.output_chunk'), { what: 'output chunk frame' });
    await b.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/cancel`);
    await sse.done;
    const types = sse.frames.map((f) => JSON.parse(f.data).data.event_type);
    expect(types).toEqual(expect.arrayContaining(['run.started', 'tool.shell.output_chunk', 'run.cancelled']));
    expect(sse.frames[sse.frames.length - 1].event).toBe('done');
    expect(sse.frames.map((f) => Number(f.id)).slice(0, -1)).toEqual(sse.frames.slice(0, -1).map((_, i) => i + 1));
  });

  it('answers 404 for another tenant, 400 for non-numeric cursors, and keeps the public feed per tenant', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await a.waitStatus(taskId, runId, ['completed']);
    const key = await a.call('POST', '/hecate/v1/api-keys', { name: 'tenant-b', scopes: ['operator'], tenant_id: 'tenant-b' });
    expect(key.status).toBeLessThan(300);
    const other = new Client(a.url, key.body.data.secret as string);
    expect((await other.call('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`)).status).toBe(404);
    const foreign = new SseClient(streamUrl(a, taskId, runId), {}, key.body.data.secret as string);
    await foreign.done;
    expect(foreign.status).toBe(404);
    expect(((await other.ok('GET', '/hecate/v1/events?limit=500')) as unknown as Json[]).filter((e) => e.task_id === taskId)).toEqual([]);

    const badHeader = new SseClient(streamUrl(a, taskId, runId), { 'last-event-id': 'abc' });
    await badHeader.done;
    expect(badHeader.status).toBe(400);
    expect((await a.call('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/events?after_sequence=-1`)).status).toBe(400);
    expect((await a.call('GET', '/hecate/v1/events?after_sequence=1e3')).status).toBe(400);
    const badFeed = new SseClient(`${a.url}/hecate/v1/events/stream`, { 'last-event-id': 'x1' });
    await badFeed.done;
    expect(badFeed.status).toBe(400);
  });

  it('serves the public feed as SSE with cursor ids, a filter, heartbeats and Last-Event-ID resume', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await a.waitStatus(taskId, runId, ['completed']);
    const post = (c: Client, i: number) =>
      c.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { type: 'external.event', note: `n${i}`, data: { i } });
    const firstEvent = await post(a, 0);
    const stamped = await waitFor(
      async () => {
        const feedNow = (await a.ok('GET', `/hecate/v1/events?task_id=${taskId}&event_type=external.event`)) as unknown as Json[];
        return feedNow.find((e) => e.event_id === firstEvent.event_id);
      },
      { what: 'the event in the public feed' },
    );
    const cursor0 = stamped.cursor as string;

    const sse = new SseClient(`${b.url}/hecate/v1/events/stream?event_type=external.event&task_id=${taskId}`, { 'last-event-id': cursor0 });
    await sse.opened;
    const posted = [];
    for (let i = 1; i <= 5; i++) posted.push(await post(i % 2 ? a : b, i));
    await sse.waitFrames(5);
    expect(sse.frames.map((f) => JSON.parse(f.data).data.event_id)).toEqual(posted.map((e) => e.event_id));
    expect(sse.frames.every((f) => f.event === 'event' && f.id === JSON.parse(f.data).data.cursor)).toBe(true);
    expect(JSON.parse(sse.frames[0].data).object).toBe('event');
    await waitFor(() => sse.comments.filter((c) => c === 'ping').length >= 2, { what: 'heartbeats' });
    expect(sse.comments[0]).toBe('ok');
    sse.close();
  });

  it('public feed under 8 concurrent writers on two api processes: a poller with after_sequence sees every event exactly once', async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const r = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
        await a.waitStatus(r.taskId, r.runId, ['completed']);
        return r;
      }),
    );
    // Start after everything already in the feed, before any writer runs.
    const head = (await a.call('GET', '/hecate/v1/events?limit=1')).body;
    let cursor = 0;
    for (let page = head.data as Json[]; page.length > 0;) {
      cursor = Number(page[page.length - 1].cursor);
      page = ((await a.call('GET', `/hecate/v1/events?after_sequence=${cursor}&limit=500`)).body.data as Json[]) ?? [];
    }
    const posted = new Set<string>();
    let writing = true;
    const writers = runs.map(async ({ taskId, runId }, w) => {
      for (let i = 0; i < 25; i++) {
        const e = await (w % 2 ? a : b).ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { w, i } });
        posted.add(e.event_id as string);
      }
    });
    const seen: string[] = [];
    const poll = async (c: Client) => {
      const res = await c.call('GET', `/hecate/v1/events?after_sequence=${cursor}&event_type=external.event&limit=13`);
      for (const e of res.body.data as Json[]) {
        expect(Number(e.cursor)).toBeGreaterThan(cursor);
        cursor = Number(e.cursor);
        seen.push(e.event_id as string);
      }
      return (res.body.data as Json[]).length;
    };
    const poller = (async () => {
      let i = 0;
      while (writing) await poll(i++ % 2 ? a : b);
    })();
    await Promise.all(writers);
    writing = false;
    await poller;
    await waitFor(
      async () => {
        while ((await poll(a)) > 0);
        return seen.length >= posted.size;
      },
      { what: 'every posted event in the feed' },
    );
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(posted);
  });

  it('replays a feed of many MB from cursor 0 at the pace its reader reads: every event once, in order, then the live tail', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await a.waitStatus(taskId, runId, ['completed']);
    const before = ((await a.ok('GET', '/hecate/v1/system/stats')).sse as Json).slow_consumer_disconnects as number;
    // 56 events of 256 KiB: 14 MB, well past the 1 MiB slow-consumer bound and loopback's socket buffers.
    const pad = 'p'.repeat(256 * 1024);
    const posted: string[] = [];
    for (let i = 0; i < 7; i++) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, j) => (j % 2 ? a : b).ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { i, j, pad } })),
      );
      posted.push(...batch.map((e) => e.event_id as string));
    }
    // A reader that reads nothing for two seconds, then everything as fast as it can.
    const frames: FeedFrame[] = [];
    const { req, res } = await openFeed(b, taskId, 0);
    expect(res.statusCode).toBe(200);
    res.pause();
    await new Promise((r) => setTimeout(r, 2000));
    let ended = false;
    res.on('close', () => (ended = true));
    res.on('error', () => (ended = true));
    collectFrames(res, frames);
    res.resume();
    await waitFor(() => ended || frames.length >= posted.length, { what: 'every replayed frame', timeoutMs: 60_000 });
    expect(ended).toBe(false);
    // In feed order: batches were posted one after another (the order within a batch of 8 is the commits').
    expect(frames.every((f, i) => i === 0 || f.batch >= frames[i - 1].batch)).toBe(true);
    expect(new Set(frames.map((f) => f.eventId))).toEqual(new Set(posted));
    expect(frames.every((f, i) => i === 0 || f.id > frames[i - 1].id)).toBe(true);
    // Then the live tail on the same connection.
    const live = await a.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { live: true } });
    await waitFor(() => frames.some((f) => f.eventId === live.event_id), { what: 'the live event after the replay' });
    req.destroy();
    expect(((await a.ok('GET', '/hecate/v1/system/stats')).sse as Json).slow_consumer_disconnects).toBe(before);
  });

  it('disconnects a consumer that never reads, keeps memory bounded, and keeps serving a reading consumer', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await a.waitStatus(taskId, runId, ['completed']);
    const before = ((await a.ok('GET', '/hecate/v1/system/stats')).sse as Json).slow_consumer_disconnects as number;

    // A raw client that sends the request and never reads a byte.
    const port = Number(new URL(a.url).port);
    const lazy: Socket = connect(port, '127.0.0.1');
    let closedByServer = false;
    lazy.on('close', () => (closedByServer = true));
    lazy.on('error', () => (closedByServer = true));
    await new Promise<void>((r) => lazy.once('connect', () => r()));
    lazy.write(`GET /hecate/v1/events/stream?task_id=${taskId} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    lazy.pause();
    const reader = new SseClient(`${a.url}/hecate/v1/events/stream?task_id=${taskId}`);
    await reader.opened;

    const big = 'x'.repeat(64 * 1024);
    let posted = 0;
    const disconnected = async () => (((await a.ok('GET', '/hecate/v1/system/stats')).sse as Json).slow_consumer_disconnects as number) > before;
    while (!(await disconnected()) && posted < 3000) {
      // 64 KiB events until the server gives up on the socket that never reads.
      await Promise.all(Array.from({ length: 8 }, () => b.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { big } })));
      posted += 8;
    }
    expect(await disconnected()).toBe(true);
    // Memory stays bounded: the backlog held for the lazy socket never exceeded the bound plus one frame.
    const sse = (await a.ok('GET', '/hecate/v1/system/stats')).sse as Json;
    expect(sse.largest_disconnect_backlog_bytes).toBeLessThanOrEqual(sse.max_buffer_bytes + big.length + 1024);
    expect(posted * big.length).toBeGreaterThan(sse.max_buffer_bytes);
    await reader.waitFrames(posted, 60_000);
    expect(reader.ended).toBe(false);
    reader.close();
    lazy.resume();
    await waitFor(() => closedByServer, { what: 'the lazy socket to be closed by the server' });
    lazy.destroy();
  });

  it('an api killed in the middle of a paced replay: the reader resumes on the other api from its Last-Event-ID, every event once, in order', async () => {
    const { taskId, runId } = await a.startTask({ execution_kind: 'shell', shell_command: 'true' });
    await a.waitStatus(taskId, runId, ['completed']);
    // 48 events of 256 KiB: 12 MB, more than loopback's socket buffers hold, so the replay is in flight when the api dies.
    const pad = 'k'.repeat(256 * 1024);
    const posted: string[] = [];
    for (let i = 0; i < 8; i++) {
      const batch = await Promise.all(
        Array.from({ length: 6 }, (_, j) => a.ok('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { i, j, pad } })),
      );
      posted.push(...batch.map((e) => e.event_id as string));
    }
    const frames: FeedFrame[] = [];
    const first = await openFeed(b, taskId, 0);
    expect(first.res.statusCode).toBe(200);
    let cut = false;
    first.res.on('close', () => (cut = true));
    first.res.on('error', () => (cut = true));
    // The reader holds back (the server waits for its socket to drain), and the api dies meanwhile.
    first.res.pause();
    await new Promise((r) => setTimeout(r, 500));
    await apiB.stop('SIGKILL');
    collectFrames(first.res, frames);
    first.res.resume();
    await waitFor(() => cut, { what: 'the stream to end with its api' });
    const seen = frames.length;
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThan(posted.length);
    // The other api, from the last frame the reader holds.
    const second = await openFeed(a, taskId, frames[seen - 1].id);
    expect(second.res.statusCode).toBe(200);
    collectFrames(second.res, frames);
    await waitFor(() => frames.length >= posted.length, { what: 'the rest of the replay', timeoutMs: 60_000 });
    second.req.destroy();
    expect(frames.map((f) => f.eventId)).toHaveLength(posted.length);
    expect(new Set(frames.map((f) => f.eventId))).toEqual(new Set(posted));
    expect(frames.every((f, i) => i === 0 || f.id > frames[i - 1].id)).toBe(true);
  });
});
