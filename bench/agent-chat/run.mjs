#!/usr/bin/env node
/**
 * Agent Chat benchmark. In one run, on one scaled deployment (api + worker, Postgres + Redis) and one fake
 * upstream (own process, 64 chunks paced 20 ms):
 *   1. N concurrent streamed model turns through Agent Chat (api → queue → worker → live buffer → api → client,
 *      `POST …/messages {stream: true}`) against the same load through `/v1/chat/completions` streaming on the same
 *      gateway (the baseline): added time to first token p50/p99, the largest inter-chunk gap beyond the pacing, api
 *      and worker CPU per delivered chunk;
 *   2. reconnect → first missed frame: clients drop a running turn's stream at a random index and reconnect with
 *      Last-Event-ID; the time from the reconnect to the first frame they missed (already buffered);
 *   3. guidance overhead: an agent turn of 20 instant tool-call model calls, with a guidance item pending before every
 *      call against none; the added time between consecutive model calls (p50).
 * Writes bench/results/agent-chat-<date>.{md,json}.
 *
 *   npm run bench agent-chat
 *   node bench/agent-chat/run.mjs --quick
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { createParser } from 'eventsource-parser';
import IORedis from 'ioredis';
import pg from 'pg';
import { Agent, request } from 'undici';
import { scratchDatabase } from '../lib/database.mjs';
import { sleep, stats } from '../lib/load.mjs';
import { cpuMs, ROOT, start, startHecate, stopChildren } from '../lib/processes.mjs';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const TOKEN = 'bench-agent-chat-operator-token-0123456789';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONCURRENT = QUICK ? 100 : 500;
const CHUNKS = 64;
const PACE_MS = 20;
const RECONNECTS = QUICK ? 50 : 200;
const GUIDED_CALLS = 20;
const AUTH = { authorization: `Bearer ${TOKEN}` };
const dispatcher = new Agent({ connections: 2 * CONCURRENT + 50, keepAliveTimeout: 60_000, bodyTimeout: 120_000, headersTimeout: 120_000 });

const log = (s) => process.stdout.write(`${s}\n`);

async function call(base, method, path, body) {
  const res = await request(base + path, {
    method,
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher,
  });
  const json = await res.body.json();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode}: ${JSON.stringify(json)}`);
  return json.data;
}

/**
 * One SSE response read frame by frame: calls `onFrame(event, id, data, at)` for every frame. `isToken` picks the frames
 * that carry model text (TTFT and gaps are measured on them). Resolves with the timings.
 */
async function readSse(base, path, { method = 'GET', body, headers = {}, isToken, onFrame, signal } = {}) {
  const t0 = performance.now();
  const res = await request(base + path, {
    method,
    headers: { ...AUTH, accept: 'text/event-stream', ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
    dispatcher,
    signal,
  });
  if (res.statusCode !== 200) throw new Error(`${path} → ${res.statusCode}: ${await res.body.text()}`);
  let first;
  let firstFrame;
  let last;
  let maxGap = 0;
  let tokens = 0;
  const frames = [];
  const parser = createParser({ onEvent: (e) => frames.push(e) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      for (const { event = 'message', id, data: text } of frames.splice(0)) {
        const now = performance.now();
        firstFrame ??= now - t0;
        if (isToken?.(event, text)) {
          tokens += 1;
          if (first === undefined) first = now - t0;
          else maxGap = Math.max(maxGap, now - last);
          last = now;
        }
        if (onFrame?.(event, id, text, now) === false) return { ttft: first, maxGap, tokens, aborted: true };
      }
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
  return { ttft: first, firstFrame, maxGap, tokens };
}

const v1Token = (event, text) => text.includes('"content":"') && !text.includes('"content":""');
const chatToken = (event) => event === 'delta';

/** N streams at once through `fn`; the CPU the api and worker spent meanwhile. */
async function load(label, procs, fn) {
  const cpu0 = procs.map((p) => cpuMs(p.pid));
  const results = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => sleep((i * 200) / CONCURRENT).then(() => fn(i))));
  const cpu = procs.map((p, i) => cpuMs(p.pid) - cpu0[i]);
  const tokens = results.reduce((n, r) => n + r.tokens, 0);
  const bad = results.filter((r) => r.tokens !== CHUNKS).length;
  if (bad) log(`  ${label}: ${bad} of ${CONCURRENT} streams did not deliver ${CHUNKS} chunks`);
  return {
    ttft: stats(results.map((r) => r.ttft)),
    first_frame: stats(results.map((r) => r.firstFrame)),
    maxGapBeyondPacingMs: Math.max(...results.map((r) => r.maxGap)) - PACE_MS,
    tokens,
    incomplete: bad,
    cpuMsPerChunk: Object.fromEntries(procs.map((p, i) => [p.label, cpu[i] / tokens])),
  };
}

/** The guidance scenario's model: instant read_file tool calls until GUIDED_CALLS calls, then an answer; records arrivals. */
function guidanceModel() {
  const arrivals = [];
  let onCall = async () => undefined;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'guide-model', object: 'model', created: 0, owned_by: 'bench' }] }));
      return;
    }
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', async () => {
      arrivals.push(performance.now());
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      const n = body.messages.filter((m) => m.role === 'assistant').length;
      await onCall(n);
      const frame = (delta, finish = null) =>
        `data: ${JSON.stringify({ id: `g${n}`, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n < GUIDED_CALLS - 1) {
        res.write(
          frame({
            role: 'assistant',
            tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }],
          }),
        );
        res.write(frame({}, 'tool_calls'));
      } else {
        res.write(frame({ role: 'assistant', content: 'done' }));
        res.write(frame({}, 'stop'));
      }
      res.end('data: [DONE]\n\n');
      // The call is over once the response is written: the interval to the next arrival is the loop's own time.
      arrivals.push(-performance.now());
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${server.address().port}`,
        arrivals,
        setOnCall: (f) => (onCall = f),
      }),
    ),
  );
}

/** Gaps between the end of one model response and the next request, over one agent turn. */
function loopGaps(arrivals) {
  const gaps = [];
  for (let i = 1; i + 1 < arrivals.length; i += 2) gaps.push(arrivals[i + 1] - -arrivals[i]);
  return gaps;
}

/**
 * The floor of a durable hand-off, in a plain Node script on the same Postgres and Redis: N arrivals (spread like the
 * streams) each commit a turn (session row update, turn insert, two message inserts, on a pool of 10 like the api's)
 * and add a BullMQ job; a BullMQ worker (concurrency N) claims each job with one committed UPDATE. Reports arrival →
 * claimed. What Agent Chat adds beyond it is HTTP, the snapshot, the model call through the router and the live buffer.
 */
async function handoffFloor(dbUrl, n) {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 10 });
  await pool.query('CREATE TABLE IF NOT EXISTS floor_sessions (id text PRIMARY KEY, next_sequence int NOT NULL DEFAULT 1)');
  await pool.query('CREATE TABLE IF NOT EXISTS floor_turns (id text PRIMARY KEY, session_id text, status text, owner text)');
  await pool.query('CREATE TABLE IF NOT EXISTS floor_messages (id text PRIMARY KEY, session_id text, sequence int, content text)');
  for (let i = 0; i < n; i++) await pool.query('INSERT INTO floor_sessions (id) VALUES ($1) ON CONFLICT DO NOTHING', [`s${i}`]);
  const connection = new IORedis(REDIS, { maxRetriesPerRequest: null });
  const name = `floor${process.pid}`;
  const queue = new Queue(name, { connection });
  const arrivals = new Map();
  const latencies = [];
  let resolveAll;
  const all = new Promise((r) => (resolveAll = r));
  const workerConnection = new IORedis(REDIS, { maxRetriesPerRequest: null });
  const worker = new Worker(
    name,
    async (job) => {
      await pool.query("UPDATE floor_turns SET status = 'running', owner = 'w' WHERE id = $1", [job.id]);
      latencies.push(performance.now() - arrivals.get(job.id));
      if (latencies.length === n) resolveAll();
    },
    { connection: workerConnection, concurrency: n },
  );
  await worker.waitUntilReady();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await sleep((i * 200) / n);
      const id = `t${i}_${Date.now()}`;
      arrivals.set(id, performance.now());
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const { rows } = await c.query('UPDATE floor_sessions SET next_sequence = next_sequence + 2 WHERE id = $1 RETURNING next_sequence', [`s${i}`]);
        await c.query("INSERT INTO floor_turns (id, session_id, status) VALUES ($1, $2, 'queued')", [id, `s${i}`]);
        await c.query('INSERT INTO floor_messages (id, session_id, sequence, content) VALUES ($1, $2, $3, $4), ($5, $2, $6, $7)', [
          `${id}u`,
          `s${i}`,
          rows[0].next_sequence - 2,
          'hello',
          `${id}a`,
          rows[0].next_sequence - 1,
          '',
        ]);
        await c.query('COMMIT');
      } finally {
        c.release();
      }
      await queue.add('turn', {}, { jobId: id, removeOnComplete: true });
    }),
  );
  await all;
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await connection.quit();
  await workerConnection.quit();
  await pool.end();
  return stats(latencies);
}

async function main() {
  const upstream = await start('upstream', [
    'test/support/fake-upstream/cli.js',
    '--port',
    '0',
    '--chunks',
    String(CHUNKS),
    '--chunk-interval-ms',
    String(PACE_MS),
  ]);
  const guide = await guidanceModel();
  const project = mkdtempSync(join(tmpdir(), 'hecate-bench-chat-'));
  writeFileSync(join(project, 'notes.txt'), 'note\n'.repeat(50));

  const db = await scratchDatabase('hecate_bench');
  const env = {
    GATEWAY_AUTH_TOKEN: TOKEN,
    DATABASE_URL: db.url,
    REDIS_URL: REDIS,
    GATEWAY_REDIS_PREFIX: `bc${process.pid}`,
    GATEWAY_MIGRATE_ON_BOOT: 'true',
    GATEWAY_TASK_QUEUE_WORKERS: String(CONCURRENT),
    GATEWAY_TASK_APPROVAL_POLICIES: 'none',
    GATEWAY_TASK_SANDBOX: 'none',
    GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: String(GUIDED_CALLS + 1),
    GATEWAY_RATE_LIMIT_ENABLED: 'false',
    ...(process.env.BENCH_PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}` } : {}),
    PROVIDER_FAKE_BASE_URL: `${upstream.info.url}/v1`,
    PROVIDER_FAKE_KIND: 'local',
    PROVIDER_GUIDE_BASE_URL: `${guide.url}/v1`,
    PROVIDER_GUIDE_KIND: 'local',
    GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-bench-chat-ws-')),
  };
  const out = { date: new Date().toISOString().slice(0, 10), concurrent: CONCURRENT, chunks: CHUNKS, pace_ms: PACE_MS };
  try {
    const api = await startHecate('api', 'main.api.js', env);
    const worker = await startHecate('worker', 'main.worker.js', env, { portVar: 'WORKER_HEALTH_PORT' });
    const base = api.url;
    const v1 = (i) =>
      readSse(base, '/v1/chat/completions', {
        method: 'POST',
        body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: `hello ${i}` }] },
        isToken: v1Token,
      });
    const sessions = [];
    for (let i = 0; i < CONCURRENT; i++)
      sessions.push((await call(base, 'POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini' })).id);
    const chat = (i) =>
      readSse(base, `/hecate/v1/agent-chat/sessions/${sessions[i]}/messages`, {
        method: 'POST',
        body: { content: `hello ${i}`, stream: true },
        isToken: chatToken,
      });

    log(`warm-up (${QUICK ? 20 : 50} streams each)`);
    await Promise.all(Array.from({ length: QUICK ? 20 : 50 }, (_, i) => v1(i)));
    await Promise.all(Array.from({ length: QUICK ? 20 : 50 }, (_, i) => chat(i)));

    log('one stream at a time (20 each)');
    const oneAtATime = async (fn) => {
      const ttft = [];
      for (let i = 0; i < 20; i++) ttft.push((await fn(i)).ttft);
      return stats(ttft);
    };
    out.sequential = { v1_ttft: await oneAtATime(v1), agent_chat_ttft: await oneAtATime(chat) };

    log(`${CONCURRENT} concurrent streams: /v1 baseline`);
    out.v1 = await load('/v1', [api, worker], v1);
    log(`${CONCURRENT} concurrent streams: agent chat`);
    out.agent_chat = await load('agent chat', [api, worker], chat);
    out.added_ttft_ms = { p50: out.agent_chat.ttft.p50 - out.v1.ttft.p50, p99: out.agent_chat.ttft.p99 - out.v1.ttft.p99 };

    log(`durable hand-off floor (${CONCURRENT} at once)`);
    out.handoff_floor_ms = await handoffFloor(db.url, CONCURRENT);

    log(`reconnects (${RECONNECTS})`);
    const reconnect = [];
    for (let r = 0; r < RECONNECTS; r += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, k) => {
          const session = sessions[(r + k) % sessions.length];
          const turn = await call(base, 'POST', `/hecate/v1/agent-chat/sessions/${session}/messages`, { content: 'again', wait: false });
          const dropAt = 5 + Math.floor(Math.random() * 40);
          let lastId;
          const controller = new AbortController();
          await readSse(base, `/hecate/v1/agent-chat/sessions/${session}/stream`, {
            isToken: chatToken,
            signal: controller.signal,
            onFrame: (event, id) => {
              if (event !== 'delta') return true;
              lastId = id;
              if (Number(id.split(':')[2]) >= dropAt) {
                controller.abort();
                return false;
              }
              return true;
            },
          });
          // Let the turn run on past the drop, so the missed frame is already in the buffer.
          await sleep(3 * PACE_MS);
          const t0 = performance.now();
          const again = new AbortController();
          let firstMissed;
          await readSse(base, `/hecate/v1/agent-chat/sessions/${session}/stream`, {
            headers: { 'last-event-id': lastId },
            signal: again.signal,
            onFrame: (event, id, _text, at) => {
              if (event !== 'delta') return true;
              if (Number(id.split(':')[2]) !== Number(lastId.split(':')[2]) + 1) throw new Error(`reconnect after ${lastId} got ${id} first`);
              firstMissed = at - t0;
              again.abort();
              return false;
            },
          });
          reconnect.push(firstMissed);
          void turn;
          // Let the turn finish before the session is used again.
          await readSse(base, `/hecate/v1/agent-chat/sessions/${session}/stream?last_index=${CHUNKS}`, {});
        }),
      );
    }
    out.reconnect_first_missed_ms = stats(reconnect);

    log('guidance overhead');
    const guided = async (withGuidance) => {
      const id = (
        await call(base, 'POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'agent', provider: 'guide', model: 'guide-model', workspace: project })
      ).id;
      guide.arrivals.length = 0;
      let posted = 0;
      guide.setOnCall(async () => {
        if (!withGuidance) return;
        posted += 1;
        await call(base, 'POST', `/hecate/v1/agent-chat/sessions/${id}/guidance`, { content: `guidance ${posted}` });
      });
      const s = await call(base, 'POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content: 'read the notes many times' });
      if (s.messages.at(-1).status !== 'completed') throw new Error(`guided turn ${s.messages.at(-1).status}: ${JSON.stringify(s.messages.at(-1).error)}`);
      const consumed = s.messages.filter((m) => m.metadata?.guidance_id).length;
      return { gaps: loopGaps(guide.arrivals), consumed };
    };
    const plainGaps = [];
    const guidedGaps = [];
    let consumed = 0;
    for (let i = 0; i < (QUICK ? 3 : 8); i++) {
      plainGaps.push(...(await guided(false)).gaps);
      const g = await guided(true);
      guidedGaps.push(...g.gaps);
      consumed += g.consumed;
    }
    out.guidance = {
      plain_gap_ms: stats(plainGaps),
      guided_gap_ms: stats(guidedGaps),
      consumed,
      overhead_p50_ms: stats(guidedGaps).p50 - stats(plainGaps).p50,
    };
  } finally {
    stopChildren();
    await sleep(500);
    await db.drop();
    guide.server.close();
  }

  const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
  const md = [
    `# agent-chat bench ${out.date}`,
    '',
    `Machine: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Scaled: one api and one worker process, Postgres and Redis on the same machine; fake upstream in its own process (${CHUNKS} chunks paced ${PACE_MS} ms). ${CONCURRENT} streams at once per path (arrivals spread over 200 ms), after a warm-up.`,
    '',
    '| measure | /v1 streaming (baseline) | agent chat | difference | target |',
    '|---|---|---|---|---|',
    `| time to first token p50 ms, one stream at a time | ${f(out.sequential.v1_ttft.p50)} | ${f(out.sequential.agent_chat_ttft.p50)} | ${f(out.sequential.agent_chat_ttft.p50 - out.sequential.v1_ttft.p50)} | |`,
    `| time to first token p50 ms | ${f(out.v1.ttft.p50)} | ${f(out.agent_chat.ttft.p50)} | **${f(out.added_ttft_ms.p50)}** | ≤ 5 |`,
    `| time to first token p99 ms | ${f(out.v1.ttft.p99)} | ${f(out.agent_chat.ttft.p99)} | **${f(out.added_ttft_ms.p99)}** | ≤ 15 |`,
    `| floor: durable hand-off alone (commit a turn, BullMQ add, worker claims with a commit; plain script) p50 / p99 ms | | ${f(out.handoff_floor_ms.p50)} / ${f(out.handoff_floor_ms.p99)} | | |`,
    `| time to the first frame p50 / p99 ms (agent chat: the snapshot, sent once the turn is persisted and enqueued) | ${f(out.v1.first_frame.p50)} / ${f(out.v1.first_frame.p99)} | ${f(out.agent_chat.first_frame.p50)} / ${f(out.agent_chat.first_frame.p99)} | | |`,
    `| largest inter-chunk gap beyond the ${PACE_MS} ms pacing, ms | ${f(out.v1.maxGapBeyondPacingMs)} | **${f(out.agent_chat.maxGapBeyondPacingMs)}** | | ≤ 100 |`,
    `| api CPU ms per delivered chunk | ${f(out.v1.cpuMsPerChunk.api)} | ${f(out.agent_chat.cpuMsPerChunk.api)} | ${f(out.agent_chat.cpuMsPerChunk.api - out.v1.cpuMsPerChunk.api)} | |`,
    `| worker CPU ms per delivered chunk | ${f(out.v1.cpuMsPerChunk.worker)} | ${f(out.agent_chat.cpuMsPerChunk.worker)} | | |`,
    `| streams that did not deliver all ${CHUNKS} chunks | ${out.v1.incomplete} | ${out.agent_chat.incomplete} | | 0 |`,
    `| reconnect → first missed frame p50 / p99 ms (${RECONNECTS} reconnects) | | ${f(out.reconnect_first_missed_ms.p50)} / **${f(out.reconnect_first_missed_ms.p99)}** | | p99 ≤ 50 |`,
    `| time between model calls of an agent turn p50 ms: none pending / guidance pending (${out.guidance.consumed} consumed) | ${f(out.guidance.plain_gap_ms.p50)} | ${f(out.guidance.guided_gap_ms.p50)} | **${f(out.guidance.overhead_p50_ms)}** | ≤ 10 |`,
    '',
  ].join('\n');
  log(md);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `agent-chat-${out.date}.md`), md);
  writeFileSync(join(ROOT, 'bench', 'results', `agent-chat-${out.date}.json`), JSON.stringify(out, null, 2));
}

main().then(
  () => dispatcher.close(),
  (err) => {
    console.error(err);
    stopChildren();
    process.exit(1);
  },
);
