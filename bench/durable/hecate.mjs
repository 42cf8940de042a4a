// Hecate as a contender of bench/durable: the scaled deployment (main.api.js + one main.worker.js, Postgres + Redis)
// or the embedded server (main.js, PGlite), runs created over the public API and their ends read from the public
// events feed; and the feed replay check (many external events, then one fresh read of the whole feed).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { scratchDatabase } from '../lib/database.mjs';
import { sleep } from '../lib/load.mjs';
import { startHecate } from '../lib/processes.mjs';
import { apiCall } from '../lib/api.mjs';
import { openSse } from './sse.mjs';

export const TOKEN = 'bench-durable-operator-token-0123456789';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TERMINAL = ['run.finished', 'run.failed', 'run.cancelled'];

/** The API with the operator token (bench/lib/api.mjs). */
const client = (base) => (method, path, body) => apiCall(base, TOKEN, method, path, body);

/** How long a run may take before the bench gives up on it (a run that never ends would stall a closed loop). */
const RUN_TIMEOUT_MS = 300_000;

/**
 * One subscription to the feed's terminal events (`GET /hecate/v1/events/stream?event_type=run.finished,…`):
 * `wait(runId)` resolves with the run's terminal envelope, whether it comes before or after the call. A stream the
 * server ends is reopened from its last cursor; if that fails, every wait fails.
 */
async function terminalFeed(base) {
  const waiting = new Map();
  const arrived = new Map();
  let cursor = '0';
  let closed = false;
  let stream;
  const onFrame = (frame) => {
    if (frame.id) cursor = frame.id;
    if (frame.event !== 'event') return;
    const envelope = JSON.parse(frame.data).data;
    const waiter = waiting.get(envelope.run_id);
    if (waiter) {
      waiting.delete(envelope.run_id);
      waiter.resolve(envelope);
    } else arrived.set(envelope.run_id, envelope);
  };
  const open = async () => {
    stream = await openSse(
      `${base}/hecate/v1/events/stream?event_type=${TERMINAL.join(',')}`,
      { authorization: `Bearer ${TOKEN}`, 'last-event-id': cursor },
      onFrame,
    );
    stream.ended
      .then(() => !closed && open())
      .catch((err) => {
        for (const w of waiting.values()) w.reject(new Error(`the terminal-event feed could not be reopened: ${err}`));
      });
  };
  await open();
  return {
    wait(runId) {
      const early = arrived.get(runId);
      if (early) {
        arrived.delete(runId);
        return Promise.resolve(early);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => waiting.delete(runId) && reject(new Error(`run ${runId}: no terminal event in ${RUN_TIMEOUT_MS} ms`)),
          RUN_TIMEOUT_MS,
        ).unref();
        const done = (fn) => (v) => {
          clearTimeout(timer);
          fn(v);
        };
        waiting.set(runId, { resolve: done(resolve), reject: done(reject) });
      });
    },
    close() {
      closed = true;
      stream.close();
    },
  };
}

const epochOf = (now) => performance.timeOrigin + now;

/**
 * Where a run's time went, from this client's clock and the run's event times (ms): the create and start requests,
 * start → `run.started` (queue, claim), → the first `turn.started` (workspace copy, base tree), → the last
 * `turn.completed` (the loop), → `run.finished` (diff, the run's end), → this client reading it on the feed.
 */
function phases(at, events) {
  const time = (e) => new Date(e.occurred_at).getTime();
  const first = (type) => time(events.find((e) => e.type === type));
  const last = (type) => time(events.findLast((e) => e.type === type));
  return {
    create_and_start_requests: at.started - at.t0,
    to_run_started: first('run.started') - at.started,
    to_first_model_call: first('turn.started') - first('run.started'),
    loop: last('turn.completed') - first('turn.started'),
    to_run_finished: first('run.finished') - last('turn.completed'),
    to_client: at.seen - first('run.finished'),
  };
}

/**
 * A Hecate contender over `base`: `run(prompt)` creates an agent_loop task on `project` (a copy per run, the default
 * workspace mode), starts it and waits for its terminal feed event; `verify` checks a run's turns (its
 * `turn.completed` events) and that its file_write reached the run's workspace.
 */
async function contender(label, base, project, extra) {
  const call = client(base);
  const feed = await terminalFeed(base);
  return {
    label,
    call,
    ...extra,
    async run(prompt) {
      const t0 = performance.now();
      const task = await call('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop', prompt, requested_model: 'bench-model', working_directory: project });
      const run = await call('POST', `/hecate/v1/tasks/${task.id}/start`, {});
      const started = performance.now();
      const end = await feed.wait(run.id);
      if (end.type !== 'run.finished') throw new Error(`run ${run.id}: ${end.type} ${JSON.stringify(end.data)}`);
      const t1 = performance.now();
      return { ms: t1 - t0, taskId: task.id, runId: run.id, at: { t0: epochOf(t0), started: epochOf(started), seen: epochOf(t1) } };
    },
    async verify(result, tag, turns) {
      const run = await call('GET', `/hecate/v1/tasks/${result.taskId}/runs/${result.runId}`);
      const events = await call('GET', `/hecate/v1/tasks/${result.taskId}/runs/${result.runId}/events?after_sequence=0`);
      const done = events.filter((e) => e.type === 'turn.completed').length;
      const out = join(run.workspace_path ?? '', 'out.txt');
      if (done !== turns) throw new Error(`${label}: run ${result.runId} made ${done} model calls, expected ${turns}`);
      if (!existsSync(out) || !readFileSync(out, 'utf8').includes(tag)) throw new Error(`${label}: ${out} does not hold the run's file_write`);
      return phases(result.at, events);
    },
    async close() {
      feed.close();
      await extra.stop();
    },
  };
}

const stopAll = async (procs) => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : null)));
};

/** Removes the Redis keys under `prefix` (the deployment's queues, streams and locks). */
async function dropRedisKeys(prefix) {
  const redis = new IORedis(REDIS);
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
}

/** The scaled deployment on a scratch database and Redis prefix (both removed by `stop`): one api, one worker. */
export async function startScaled(env, project) {
  const db = await scratchDatabase('hecate_bench_durable');
  const prefix = `bd${process.pid}`;
  const scaledEnv = { ...env, DATABASE_URL: db.url, REDIS_URL: REDIS, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MIGRATE_ON_BOOT: 'true' };
  const api = await startHecate('api', 'main.api.js', scaledEnv);
  const worker = await startHecate('worker', 'main.worker.js', scaledEnv, { portVar: 'WORKER_HEALTH_PORT' });
  const stop = async () => {
    await stopAll([api, worker]);
    await db.drop();
    await dropRedisKeys(prefix);
  };
  return contender('hecate scaled', api.url, project, { base: api.url, engineProcs: { api: api.pid, worker: worker.pid }, databaseUrl: db.url, stop });
}

/** The embedded server (one process, PGlite in `env.GATEWAY_DATA_DIR`). */
export async function startEmbedded(env, project) {
  const proc = await startHecate('embedded', 'main.js', env);
  return contender('hecate embedded', proc.url, project, { base: proc.url, engineProcs: { server: proc.pid }, databaseUrl: null, stop: () => stopAll([proc]) });
}

/** Posts `count` external events to one run, `inflight` requests at once; returns the seconds it took. */
async function postEvents(call, taskId, runId, count, inflight) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < count) {
        const i = next++;
        await call('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/events`, { data: { i } });
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

/**
 * Reads the whole feed from `Last-Event-ID: 0` until every posted event (`external.event` of `runId`, data.i below
 * `count`) arrived, the server ended the stream, or nothing came for `idleMs`. Checks the ids strictly increase.
 */
async function readFeed(base, runId, count, idleMs = 15_000) {
  const seen = new Uint8Array(count);
  const state = { frames: 0, posted: 0, duplicates: 0, outOfOrder: 0, last: -1, lastAt: performance.now() };
  let finish;
  const complete = new Promise((r) => (finish = r));
  const t0 = performance.now();
  const stream = await openSse(`${base}/hecate/v1/events/stream`, { authorization: `Bearer ${TOKEN}`, 'last-event-id': '0' }, (frame) => {
    if (frame.event !== 'event') return;
    state.frames += 1;
    state.lastAt = performance.now();
    const id = Number(frame.id);
    if (!(id > state.last)) state.outOfOrder += 1;
    state.last = id;
    const e = JSON.parse(frame.data).data;
    if (e.run_id !== runId || e.type !== 'external.event') return;
    const i = e.data.data.i;
    if (seen[i]) state.duplicates += 1;
    seen[i] = 1;
    if (++state.posted === count) finish('complete');
  });
  const idle = setInterval(() => performance.now() - state.lastAt > idleMs && finish('idle'), 500);
  const how = await Promise.race([complete, stream.ended.then((r) => `server ended the stream (${r})`)]);
  clearInterval(idle);
  const seconds = (state.lastAt - t0) / 1000;
  stream.close();
  return {
    how,
    seconds,
    frames: state.frames,
    posted_seen: state.posted,
    duplicates: state.duplicates,
    out_of_order: state.outOfOrder,
    events_per_s: state.frames / seconds,
  };
}

/**
 * The feed replay check on a running deployment: one short run, `count` external events posted to it (16 at once),
 * then a fresh read of the whole feed from the start. Reports whether every event arrived once and in order, the
 * read rate, and the api's slow-consumer disconnects during the read.
 */
export async function feedReplay(hecate, prompt, count) {
  const { taskId, runId } = await hecate.run(prompt);
  const postSeconds = await postEvents(hecate.call, taskId, runId, count, 16);
  await sleep(2000); // the after-commit stamper gives the last appends their feed positions
  const before = (await hecate.call('GET', '/hecate/v1/system/stats')).sse.slow_consumer_disconnects;
  const read = await readFeed(hecate.base, runId, count);
  const after = (await hecate.call('GET', '/hecate/v1/system/stats')).sse.slow_consumer_disconnects;
  return {
    events: count,
    post_seconds: postSeconds,
    posts_per_s: count / postSeconds,
    ...read,
    all_arrived_in_order: read.posted_seen === count && read.duplicates === 0 && read.out_of_order === 0,
    slow_consumer_disconnects: after - before,
  };
}
