#!/usr/bin/env node
/**
 * Chat sessions benchmark. In one run, against one fake upstream (own process): direct, the gateway bench's
 * Fastify+undici pass-through proxy (the floor), and this server (embedded: PGlite; scaled: Postgres + Redis)
 * with and without `session_id` recording on `/v1/chat/completions`. Writes bench/results/chat-sessions-<date>.{md,json}.
 *
 *   npm run bench chat-sessions                 # build + full run
 *   node bench/chat-sessions/run.mjs --quick    # shorter runs
 *   HECATE_DIST=.dist-x node bench/chat-sessions/run.mjs --no-scaled --only latency,rate,get
 *
 * Scenarios: added latency of recording at concurrency 1 (plain vs session, p50/p99); recorded exchanges per
 * second with 50 sessions written concurrently vs 1 hot session (50 writers); GET of a 10,000-message session.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { closedLoop, sleep, stats } from '../lib/load.mjs';
import { DIST, ROOT, start, startHecate, stopChildren } from '../lib/processes.mjs';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const WITH_SCALED = !argv.includes('--no-scaled');
const ONLY = argv.includes('--only') ? new Set(argv[argv.indexOf('--only') + 1].split(',')) : undefined;
const want = (name) => !ONLY || ONLY.has(name);
const TOKEN = 'bench-operator-token-0123456789abcdef';
const PROVIDER_KEY = 'sk-bench-upstream-key-0000';
const DATABASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const log = (s) => process.stdout.write(`${s}\n`);

async function startServer(label, role, env) {
  const proc = await startHecate(label, role === 'all' ? 'main.js' : 'main.api.js', { GATEWAY_AUTH_TOKEN: TOKEN, ...env });
  if (!(await fetch(`${proc.url}/v1/models`, { headers: AUTH })).ok) throw new Error(`${label}: /v1/models failed`);
  return proc;
}

async function newSession(url) {
  const res = await fetch(`${url}/hecate/v1/chat/sessions`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{}' });
  return (await res.json()).data.id;
}

const chat = (extra = {}) => ({ model: 'bench-fast', messages: [{ role: 'user', content: 'hello from the benchmark' }], ...extra });

/** Closed loop where each worker has its own body (its own session). */
async function perWorkerLoop({ origin, bodies, durationMs, warmupMs }) {
  const pool = new Pool(origin, { connections: bodies.length, pipelining: 1, keepAliveTimeout: 60_000 });
  const one = async (body) => {
    const t0 = performance.now();
    const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', ...AUTH }, body });
    await res.body.text();
    return { ms: performance.now() - t0, ok: res.statusCode === 200 };
  };
  const run = async (ms, record) => {
    const end = performance.now() + ms;
    await Promise.all(
      bodies.map(async (b) => {
        const body = JSON.stringify(b);
        while (performance.now() < end) {
          const r = await one(body).catch(() => ({ ms: 0, ok: false }));
          record?.(r);
        }
      }),
    );
  };
  await run(warmupMs);
  const latencies = [];
  let errors = 0;
  const t0 = performance.now();
  await run(durationMs, (r) => (r.ok ? latencies.push(r.ms) : errors++));
  const elapsed = performance.now() - t0;
  await pool.close();
  return { ...stats(latencies), errors, rps: (latencies.length / elapsed) * 1000 };
}

async function timedGets(url, path, count) {
  const pool = new Pool(url, { connections: 1 });
  const lat = [];
  let bytes = 0;
  for (let i = 0; i < count + 5; i++) {
    const t0 = performance.now();
    const res = await pool.request({ method: 'GET', path, headers: AUTH });
    const text = await res.body.text();
    if (i >= 5) lat.push(performance.now() - t0);
    bytes = text.length;
    if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode}`);
  }
  await pool.close();
  return { ...stats(lat), bytes };
}

async function main() {
  const started = new Date();
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: process.platform,
  };
  log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gb} GiB, node ${machine.node}; dist=${DIST}; quick=${QUICK}`);
  const upstream = await start('upstream', ['test/support/fake-upstream/cli.js', '--port', '0', '--require-key', PROVIDER_KEY, '--models', 'bench-fast']);
  const proxy = await start('proxy', ['bench/gateway/passthrough-proxy.mjs', upstream.info.url]);
  const providerEnv = { GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true', PROVIDER_U0_BASE_URL: `${upstream.info.url}/v1`, PROVIDER_U0_API_KEY: PROVIDER_KEY };
  const servers = [await startServer('embedded', 'all', { ...providerEnv, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'hecate-chat-bench-')) })];
  let db;
  if (WITH_SCALED) {
    const name = `hecate_chat_bench_${Date.now()}`;
    const admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(DATABASE);
    u.pathname = `/${name}`;
    db = { name, url: u.toString() };
    servers.push(
      await startServer('scaled', 'api', {
        ...providerEnv,
        DATABASE_URL: db.url,
        REDIS_URL: REDIS,
        GATEWAY_REDIS_PREFIX: `chatbench${Date.now()}`,
        GATEWAY_MIGRATE_ON_BOOT: 'true',
      }),
    );
  }
  const results = { machine, started_at: started.toISOString(), quick: QUICK, scenarios: {} };

  // 1. Added latency of session recording, non-streaming, concurrency 1.
  if (want('latency')) {
    const count = QUICK ? 1500 : 4000;
    const rows = [];
    const run = async (label, origin, headers, body) => {
      const r = await closedLoop({ origin, path: '/v1/chat/completions', headers, body, concurrency: 1, count, warmup: 300 });
      rows.push({ target: label, ...r });
      log(`latency c=1  ${label.padEnd(22)} p50 ${fmt(r.p50, 3)} ms  p99 ${fmt(r.p99, 3)} ms  errors ${r.errors}`);
    };
    await run('direct', upstream.info.url, { authorization: `Bearer ${PROVIDER_KEY}` }, chat());
    await run('passthrough', `http://127.0.0.1:${proxy.info.port}`, { authorization: `Bearer ${PROVIDER_KEY}` }, chat());
    for (const s of servers) {
      await run(`${s.label} plain`, s.url, AUTH, chat());
      await run(`${s.label} session`, s.url, AUTH, chat({ session_id: await newSession(s.url) }));
    }
    results.scenarios.latency_c1 = rows;
  }

  // 2. Recorded exchanges per second: 50 sessions written concurrently vs one hot session with 50 writers.
  if (want('rate')) {
    const durationMs = QUICK ? 4000 : 10000;
    const warmupMs = QUICK ? 1000 : 2000;
    const rows = [];
    const plainBodies = Array.from({ length: 50 }, () => chat());
    // The pass-through proxy forwards the caller's key as is: it gets the upstream key.
    const passthrough = await closedLoop({
      origin: `http://127.0.0.1:${proxy.info.port}`,
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${PROVIDER_KEY}` },
      body: chat(),
      concurrency: 50,
      durationMs,
      warmupMs,
    });
    rows.push({ target: 'passthrough c=50', ...passthrough });
    log(`rate c=50 passthrough              ${fmt(passthrough.rps, 0)} req/s  p50 ${fmt(passthrough.p50)} ms  p99 ${fmt(passthrough.p99)} ms`);
    for (const s of servers) {
      const plain = await perWorkerLoop({ origin: s.url, bodies: plainBodies, durationMs, warmupMs });
      const spreadIds = await Promise.all(Array.from({ length: 50 }, () => newSession(s.url)));
      const spread = await perWorkerLoop({ origin: s.url, bodies: spreadIds.map((id) => chat({ session_id: id })), durationMs, warmupMs });
      const hotId = await newSession(s.url);
      const hot = await perWorkerLoop({ origin: s.url, bodies: Array.from({ length: 50 }, () => chat({ session_id: hotId })), durationMs, warmupMs });
      rows.push({ target: `${s.label} plain c=50`, ...plain }, { target: `${s.label} 50 sessions`, ...spread }, { target: `${s.label} 1 hot session`, ...hot });
      log(
        `rate c=50 ${s.label.padEnd(9)} plain ${fmt(plain.rps, 0)} req/s | 50 sessions ${fmt(spread.rps, 0)} rec/s (p99 ${fmt(spread.p99)} ms) | 1 hot session ${fmt(hot.rps, 0)} rec/s (p99 ${fmt(hot.p99)} ms, ${fmt((hot.rps / spread.rps) * 100, 0)} %)  errors ${plain.errors + spread.errors + hot.errors}`,
      );
    }
    results.scenarios.recording_rate = rows;
  }

  // 3. GET of a 10,000-message session (active path = every message) and its tree view.
  if (want('get')) {
    const rows = [];
    for (const s of servers) {
      const id = await newSession(s.url);
      const build = await closedLoop({
        origin: s.url,
        path: '/v1/chat/completions',
        headers: AUTH,
        body: chat({ session_id: id }),
        concurrency: 16,
        count: 5000,
      });
      const path = `/hecate/v1/chat/sessions/${id}`;
      const count = QUICK ? 30 : 100;
      const active = await timedGets(s.url, path, count);
      const tree = await timedGets(s.url, `${path}?view=tree`, Math.ceil(count / 2));
      const list = await timedGets(s.url, '/hecate/v1/chat/sessions', count);
      const info = await (await fetch(`${s.url}${path}`, { headers: AUTH })).json();
      rows.push({ target: s.label, messages: info.data.messages.length, build_rps: build.rps, active, tree, list });
      log(
        `GET 10k ${s.label.padEnd(9)} messages ${info.data.messages.length}  active p50 ${fmt(active.p50)} ms p99 ${fmt(active.p99)} ms (${fmt(active.bytes / 2 ** 20)} MiB)  tree p50 ${fmt(tree.p50)} ms p99 ${fmt(tree.p99)} ms  list p50 ${fmt(list.p50)} ms`,
      );
    }
    results.scenarios.get_10k = rows;
  }

  const md = report(results);
  process.stdout.write(`\n${md}\n`);
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const stamp = started.toISOString().slice(0, 10);
  if (ONLY) {
    log('(partial run: --only; results not written)');
  } else {
    writeFileSync(join(ROOT, `bench/results/chat-sessions-${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(ROOT, `bench/results/chat-sessions-${stamp}.md`), `${md}\n`);
    log(`wrote bench/results/chat-sessions-${stamp}.{md,json}`);
  }
  if (db) {
    stopChildren();
    await sleep(1500);
    const admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
    await admin.end();
  }
}

function report(r) {
  const find = (rows, t) => rows.find((x) => x.target === t);
  const labels = WITH_SCALED ? ['embedded', 'scaled'] : ['embedded'];
  const m = r.machine;
  const lines = [`# Chat sessions benchmark — ${r.started_at.slice(0, 10)}`, ''];
  lines.push(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GiB RAM, Node ${m.node}, ${m.platform}. Load generator, fake upstream, proxy, server, Postgres and Redis share these cores.`,
    '',
  );
  lines.push(
    `Command: \`npm run bench chat-sessions${r.quick ? ' -- --quick' : ''}\` (auth on, usage ledger on; embedded = PGlite + in-process adapters, scaled = Postgres + Redis; upstream answers at once).`,
    '',
  );
  lines.push(`| Scenario | Target | pass-through | ${labels.join(' | ')} | Result |`, `|---|---|---|${labels.map(() => '---|').join('')}---|`);
  const lat = r.scenarios.latency_c1;
  if (lat) {
    const pt = find(lat, 'passthrough');
    const d = find(lat, 'direct');
    for (const k of ['p50', 'p99']) {
      const cells = labels.map((l) => {
        const plain = find(lat, `${l} plain`);
        const sess = find(lat, `${l} session`);
        return { text: `${fmt(plain[k], 3)} → ${fmt(sess[k], 3)} ms (+${fmt(sess[k] - plain[k], 3)})`, added: sess[k] - plain[k] };
      });
      const ok = k === 'p50' ? (cells.every((c) => c.added <= 1) ? 'met' : 'missed') : 'report';
      lines.push(
        `| recording added latency c=1 ${k} (plain → session_id) | ${k === 'p50' ? '≤ 1 ms' : '—'} | ${fmt(pt[k], 3)} ms (direct ${fmt(d[k], 3)}) | ${cells.map((c) => c.text).join(' | ')} | ${ok} |`,
      );
    }
  }
  const rate = r.scenarios.recording_rate;
  if (rate) {
    const pt = find(rate, 'passthrough c=50');
    const cells = labels.map((l) => {
      const plain = find(rate, `${l} plain c=50`);
      const spread = find(rate, `${l} 50 sessions`);
      const hot = find(rate, `${l} 1 hot session`);
      return { spread, hot, plain, ratio: hot.rps / spread.rps };
    });
    lines.push(
      `| recorded exchanges/s, 50 sessions × 1 writer (plain /v1 c=50 in brackets) | report | ${fmt(pt.rps, 0)} req/s | ${cells.map((c) => `${fmt(c.spread.rps, 0)} /s (plain ${fmt(c.plain.rps, 0)})`).join(' | ')} | report |`,
    );
    lines.push(
      `| recorded exchanges/s, 1 hot session × 50 writers | ≥ 50 % of 50 sessions | — | ${cells.map((c) => `${fmt(c.hot.rps, 0)} /s (${fmt(c.ratio * 100, 0)} %)`).join(' | ')} | ${cells.every((c) => c.ratio >= 0.5) ? 'met' : 'missed'} |`,
    );
  }
  const get = r.scenarios.get_10k;
  if (get) {
    lines.push(
      `| GET session with 10,000 messages (active path), p50 / p99 | report | — | ${labels
        .map((l) => {
          const x = find(get, l);
          return `${fmt(x.active.p50)} / ${fmt(x.active.p99)} ms (${x.messages} msgs, ${fmt(x.active.bytes / 2 ** 20)} MiB)`;
        })
        .join(' | ')} | report |`,
    );
    lines.push(
      `| GET ?view=tree of the same session, p50 / p99 | report | — | ${labels
        .map((l) => {
          const x = find(get, l);
          return `${fmt(x.tree.p50)} / ${fmt(x.tree.p99)} ms`;
        })
        .join(' | ')} | report |`,
    );
  }
  lines.push('', 'Raw numbers are in the JSON file next to this one.');
  return lines.join('\n');
}

main()
  .catch((err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(stopChildren);
