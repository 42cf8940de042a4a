#!/usr/bin/env node
/**
 * Gateway benchmark. In one invocation, the same load goes direct to a fake upstream (own process), through a
 * minimal Fastify+undici pass-through proxy (the floor for any Node gateway) and through this gateway
 * (embedded: PGlite + in-process adapters; scaled: Postgres + Redis), with auth on and the usage ledger on.
 * Prints a table of ratios against the targets and writes bench/results/gateway-<date>.{md,json}.
 *
 *   npm run bench gateway                      # build + full run (10-minute RSS soak)
 *   node bench/gateway/run.mjs --quick         # shorter runs, 1-minute soak
 *   node bench/gateway/run.mjs --soak-minutes 0 --no-scaled
 *   node bench/gateway/run.mjs --only latency,ttft       # some scenarios; results not written
 *   HECATE_DIST=.dist-x node bench/gateway/run.mjs
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { measureCpuStalls } from '../lib/cpu-stalls.mjs';
import { closedLoop, rssMb, sleep, stats, streams } from '../lib/load.mjs';
import { DIST, ROOT, start, startHecate, stopChildren } from '../lib/processes.mjs';

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : argv[i + 1];
};
const QUICK = flag('--quick');
const SOAK_MIN = Number(opt('--soak-minutes', QUICK ? 1 : 10));
const WITH_SCALED = !flag('--no-scaled');
// --only latency,throughput,ttft,streams,messages,responses,budgets,soak
const ONLY = opt('--only', undefined)?.split(',');
const wanted = (name) => !ONLY || ONLY.includes(name);
const TOKEN = 'bench-operator-token-0123456789abcdef';
const PROVIDER_KEY = 'sk-bench-upstream-key-0000';
const DATABASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function startGateway(label, role, env) {
  const proc = await startHecate(label, role === 'all' ? 'main.js' : 'main.api.js', { GATEWAY_AUTH_TOKEN: TOKEN, ...env });
  const models = await fetch(`${proc.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!models.ok) throw new Error(`${label}: /v1/models ${models.status}`);
  return proc;
}

const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const log = (s) => process.stdout.write(`${s}\n`);

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
  // Before anything else starts: how often the cores pause under a busy loop (the floor of every tail below).
  machine.cpu_stalls = await measureCpuStalls(QUICK ? 3 : 5);
  log(`cpu stalls: ${stallLine(machine.cpu_stalls)}`);

  const fake = (label, extra) => start(label, ['test/support/fake-upstream/cli.js', '--port', '0', '--require-key', PROVIDER_KEY, ...extra]);
  const [u0, u20, usse, u0a] = await Promise.all([
    fake('upstream-0ms', ['--models', 'bench-fast']),
    fake('upstream-20ms', ['--latency-ms', '20', '--models', 'bench-20ms']),
    fake('upstream-sse', ['--chunks', '64', '--chunk-interval-ms', '20', '--models', 'bench-sse']),
    fake('upstream-anthropic', ['--models', 'bench-fast-a']),
  ]);
  const proxy = (label, up) => start(label, ['bench/gateway/passthrough-proxy.mjs', up.info.url]);
  const [p0, p20, psse] = await Promise.all([proxy('proxy-0ms', u0), proxy('proxy-20ms', u20), proxy('proxy-sse', usse)]);

  const providerEnv = {
    GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true',
    PROVIDER_U0_BASE_URL: `${u0.info.url}/v1`,
    PROVIDER_U0_API_KEY: PROVIDER_KEY,
    PROVIDER_U20_BASE_URL: `${u20.info.url}/v1`,
    PROVIDER_U20_API_KEY: PROVIDER_KEY,
    PROVIDER_USSE_BASE_URL: `${usse.info.url}/v1`,
    PROVIDER_USSE_API_KEY: PROVIDER_KEY,
    PROVIDER_U0A_BASE_URL: `${u0a.info.url}/v1`,
    PROVIDER_U0A_API_KEY: PROVIDER_KEY,
    PROVIDER_U0A_PROTOCOL: 'anthropic',
  };
  const gateways = [];
  gateways.push(await startGateway('gateway-embedded', 'all', { ...providerEnv, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'hecate-bench-')) }));
  let db;
  if (WITH_SCALED) {
    const name = `hecate_bench_${Date.now()}`;
    const admin = new pg.Client({ connectionString: DATABASE });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(DATABASE);
    u.pathname = `/${name}`;
    db = { name, url: u.toString() };
    gateways.push(
      await startGateway('gateway-scaled', 'api', {
        ...providerEnv,
        DATABASE_URL: db.url,
        REDIS_URL: REDIS,
        GATEWAY_REDIS_PREFIX: `bench${Date.now()}`,
        GATEWAY_MIGRATE_ON_BOOT: 'true',
      }),
    );
  }

  const gw = (g) => ({ label: g.label, origin: g.url, headers: { authorization: `Bearer ${TOKEN}` }, pid: g.pid });
  const direct = (u) => ({ label: 'direct', origin: u.info.url, headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
  const viaProxy = (p) => ({ label: 'passthrough', origin: `http://127.0.0.1:${p.info.port}`, headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
  const results = { machine, started_at: started.toISOString(), quick: QUICK, scenarios: {} };
  const chat = (model, extra = {}) => ({ model, messages: [{ role: 'user', content: 'hello from the benchmark' }], ...extra });

  // 1. Added latency, non-streaming, concurrency 1.
  if (wanted('latency')) {
    const count = QUICK ? 1500 : 5000;
    const rows = [];
    for (const t of [direct(u0), viaProxy(p0), ...gateways.map(gw)]) {
      // Steady state: every target gets the same warm-up (JIT, connection pools, caches) before measuring.
      const r = await closedLoop({
        origin: t.origin,
        path: '/v1/chat/completions',
        headers: t.headers,
        body: chat('bench-fast'),
        concurrency: 1,
        count,
        warmup: 3000,
      });
      rows.push({ target: t.label, ...r });
      log(`latency c=1  ${t.label.padEnd(18)} p50 ${fmt(r.p50, 3)} ms  p99 ${fmt(r.p99, 3)} ms  errors ${r.errors}`);
    }
    results.scenarios.latency_c1 = rows;
  }

  // 2. Throughput, non-streaming, 20 ms upstream, concurrency 200.
  if (wanted('throughput')) {
    const durationMs = QUICK ? 5000 : 15000;
    const rows = [];
    for (const t of [direct(u20), viaProxy(p20), ...gateways.map(gw)]) {
      const r = await closedLoop({
        origin: t.origin,
        path: '/v1/chat/completions',
        headers: t.headers,
        body: chat('bench-20ms'),
        concurrency: 200,
        durationMs,
        warmupMs: 2000,
      });
      rows.push({ target: t.label, ...r });
      log(`throughput c=200 ${t.label.padEnd(18)} ${fmt(r.rps, 0)} req/s  p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  errors ${r.errors}`);
    }
    results.scenarios.throughput_c200 = rows;
  }

  // 3. Streaming time-to-first-token (64 chunks, 20 ms apart), 32 concurrent streams in steady state: arrivals
  // spread over one stream's length (not 32 connects in one tick), every connection already open (the first 64
  // streams of each run are not counted), and the targets measured in interleaved rounds so that whatever else
  // the machine does lands on all of them alike; p99 over all rounds' samples (3 × 512 per target).
  if (wanted('ttft')) {
    const perRound = QUICK ? 128 : 512;
    const rounds = QUICK ? 1 : 3;
    const targets = [direct(usse), viaProxy(psse), ...gateways.map(gw)];
    const acc = new Map(targets.map((t) => [t.label, { samples: [], roundP99: [], completed: 0, errors: 0, incomplete: 0, maxGapMs: 0 }]));
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) {
        const r = await streams({
          origin: t.origin,
          path: '/v1/chat/completions',
          headers: t.headers,
          body: chat('bench-sse', { stream: true }),
          concurrency: 32,
          total: perRound,
          endMarker: '[DONE]',
          staggerMs: 1300,
          warmup: 64,
        });
        const a = acc.get(t.label);
        a.samples.push(...r.ttftSamples);
        a.roundP99.push(r.ttft.p99);
        a.completed += r.completed;
        a.errors += r.errors;
        a.incomplete += r.incomplete;
        a.maxGapMs = Math.max(a.maxGapMs, r.maxGapMs);
        log(
          `stream ttft c=32 round ${round + 1}/${rounds} ${t.label.padEnd(18)} p50 ${fmt(r.ttft.p50, 3)} ms  p99 ${fmt(r.ttft.p99, 3)} ms  completed ${r.completed}/${perRound}`,
        );
      }
    }
    const rows = targets.map((t) => {
      const { samples, ...a } = acc.get(t.label);
      return { target: t.label, ttft: stats(samples), ...a };
    });
    for (const r of rows)
      log(
        `stream ttft c=32 all rounds ${r.target.padEnd(18)} p50 ${fmt(r.ttft.p50, 3)} ms  p99 ${fmt(r.ttft.p99, 3)} ms  (rounds' p99: ${r.roundP99.map((x) => fmt(x, 2)).join(', ')})  completed ${r.completed}/${perRound * rounds}`,
      );
    results.scenarios.stream_ttft = rows;
  }

  // 4. 512 concurrent streams: every stream completes, no stall.
  if (wanted('streams')) {
    const rows = [];
    for (const t of [direct(usse), viaProxy(psse), ...gateways.map(gw)]) {
      const r = await streams({
        origin: t.origin,
        path: '/v1/chat/completions',
        headers: t.headers,
        body: chat('bench-sse', { stream: true }),
        concurrency: 512,
        total: 512,
        endMarker: '[DONE]',
      });
      rows.push({ target: t.label, ...r });
      log(
        `512 streams  ${t.label.padEnd(18)} completed ${r.completed}/512  errors ${r.errors}  duration p99 ${fmt(r.duration.p99, 0)} ms  max gap ${fmt(r.maxGapMs, 0)} ms`,
      );
    }
    results.scenarios.streams_512 = rows;
  }

  // 5. /v1/messages: translated to an OpenAI upstream vs native passthrough to an Anthropic upstream.
  if (wanted('messages')) {
    const count = QUICK ? 1500 : 5000;
    const rows = [];
    const msg = (model) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hello from the benchmark' }] });
    const d = await closedLoop({
      origin: u0a.info.url,
      path: '/v1/messages',
      headers: { 'x-api-key': PROVIDER_KEY },
      body: msg('bench-fast-a'),
      count,
      warmup: 500,
    });
    rows.push({ target: 'direct (anthropic upstream)', ...d });
    for (const g of gateways.map(gw)) {
      const native = await closedLoop({ origin: g.origin, path: '/v1/messages', headers: g.headers, body: msg('bench-fast-a'), count, warmup: 500 });
      const translated = await closedLoop({ origin: g.origin, path: '/v1/messages', headers: g.headers, body: msg('bench-fast'), count, warmup: 500 });
      rows.push({ target: `${g.label} native`, ...native }, { target: `${g.label} translated`, ...translated });
      log(
        `messages ${g.label.padEnd(18)} native p50 ${fmt(native.p50, 3)} ms  translated p50 ${fmt(translated.p50, 3)} ms  (+${fmt(translated.p50 - native.p50, 3)} ms)`,
      );
    }
    results.scenarios.messages_translation = rows;
  }

  // 5b. /v1/responses translated to chat completions (stored, the default; and store:false) vs native /v1/chat/completions.
  if (wanted('responses')) {
    const count = QUICK ? 1500 : 5000;
    const rows = [];
    const input = { model: 'bench-fast', input: 'hello from the benchmark' };
    for (const g of gateways.map(gw)) {
      const native = await closedLoop({ origin: g.origin, path: '/v1/chat/completions', headers: g.headers, body: chat('bench-fast'), count, warmup: 500 });
      const stored = await closedLoop({ origin: g.origin, path: '/v1/responses', headers: g.headers, body: input, count, warmup: 500 });
      const unstored = await closedLoop({ origin: g.origin, path: '/v1/responses', headers: g.headers, body: { ...input, store: false }, count, warmup: 500 });
      rows.push(
        { target: `${g.label} chat`, ...native },
        { target: `${g.label} responses`, ...stored },
        { target: `${g.label} responses unstored`, ...unstored },
      );
      log(
        `responses ${g.label.padEnd(18)} chat p50 ${fmt(native.p50, 3)} ms  responses p50 ${fmt(stored.p50, 3)} ms (+${fmt(stored.p50 - native.p50, 3)})  store:false ${fmt(unstored.p50, 3)} ms (+${fmt(unstored.p50 - native.p50, 3)})  errors ${stored.errors + unstored.errors}`,
      );
    }
    results.scenarios.responses_translation = rows;
  }

  // 5c. A tenant with a spend budget: every call's admission (a reservation in the budget's window) and settlement,
  // against the same gateway's calls without one, measured back to back.
  if (wanted('budgets')) {
    const count = QUICK ? 1500 : 5000;
    const rows = [];
    for (const g of gateways.map(gw)) {
      const json = { ...g.headers, 'content-type': 'application/json' };
      const plain = await closedLoop({ origin: g.origin, path: '/v1/chat/completions', headers: g.headers, body: chat('bench-fast'), count, warmup: 500 });
      const made = await fetch(`${g.origin}/hecate/v1/budgets`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ scope: 'tenant', period: 'day', limit_micros_usd: 1e12, name: 'bench' }),
      });
      if (made.status !== 201) throw new Error(`${g.label}: POST /hecate/v1/budgets ${made.status}: ${await made.text()}`);
      const budget = (await made.json()).data;
      const budgeted = await closedLoop({ origin: g.origin, path: '/v1/chat/completions', headers: g.headers, body: chat('bench-fast'), count, warmup: 500 });
      await fetch(`${g.origin}/hecate/v1/budgets/${budget.id}`, { method: 'DELETE', headers: g.headers });
      rows.push({ target: `${g.label} unbudgeted`, ...plain }, { target: `${g.label} budgeted`, ...budgeted });
      log(
        `budgets ${g.label.padEnd(18)} unbudgeted p50 ${fmt(plain.p50, 3)} ms  budgeted p50 ${fmt(budgeted.p50, 3)} ms (+${fmt(budgeted.p50 - plain.p50, 3)})  p99 +${fmt(budgeted.p99 - plain.p99, 3)}  errors ${budgeted.errors}`,
      );
    }
    results.scenarios.budgets = rows;
  }

  // 6. RSS at a steady rate: after 1 minute vs after the soak.
  if (SOAK_MIN > 0 && wanted('soak')) {
    const g = gw(gateways[0]);
    const samples = [];
    const until = Date.now() + SOAK_MIN * 60_000;
    let stop = false;
    const sampler = (async () => {
      const t0 = Date.now();
      while (!stop) {
        samples.push({ t_s: Math.round((Date.now() - t0) / 1000), rss_mb: rssMb(g.pid) });
        await sleep(10_000);
      }
    })();
    const load = closedLoop({
      origin: g.origin,
      path: '/v1/chat/completions',
      headers: g.headers,
      body: chat('bench-20ms'),
      concurrency: 4,
      durationMs: SOAK_MIN * 60_000,
    });
    const streamLoad = (async () => {
      let n = 0;
      while (Date.now() < until) {
        await streams({
          origin: g.origin,
          path: '/v1/chat/completions',
          headers: g.headers,
          body: chat('bench-sse', { stream: true }),
          concurrency: 8,
          total: 8,
          endMarker: '[DONE]',
        });
        n += 8;
      }
      return n;
    })();
    const [r, nStreams] = await Promise.all([load, streamLoad]);
    stop = true;
    await sampler;
    samples.push({ t_s: SOAK_MIN * 60, rss_mb: rssMb(g.pid) });
    const at1 = samples.find((s) => s.t_s >= 60) ?? samples[samples.length - 1];
    const end = samples[samples.length - 1];
    results.scenarios.soak = {
      target: g.label,
      minutes: SOAK_MIN,
      requests: r.n,
      streams: nStreams,
      rps: r.rps,
      rss_1min_mb: at1.rss_mb,
      rss_end_mb: end.rss_mb,
      samples,
    };
    log(`soak ${SOAK_MIN} min ${g.label}: ${r.n} requests + ${nStreams} streams; RSS 1 min ${fmt(at1.rss_mb, 1)} MB → end ${fmt(end.rss_mb, 1)} MB`);
  }

  // Usage ledger check: rows were written off the request path.
  for (const g of gateways) {
    const s = await (await fetch(`${g.url}/hecate/v1/usage/summary`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
    results[`ledger_${g.label}`] = { calls: s.data.calls };
    log(`ledger ${g.label}: ${s.data.calls} rows`);
  }

  const md = report(results);
  process.stdout.write(`\n${md}\n`);
  if (ONLY) log('--only: partial run, bench/results not written');
  else {
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    const stamp = started.toISOString().slice(0, 10);
    writeFileSync(join(ROOT, `bench/results/gateway-${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(ROOT, `bench/results/gateway-${stamp}.md`), `${md}\n`);
    log(`wrote bench/results/gateway-${stamp}.{md,json}`);
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

function stallLine(s) {
  return `${fmt(s.pauses_over_1ms_per_core_s, 1)} pauses > 1 ms and ${fmt(s.pauses_over_3ms_per_core_s, 1)} > 3 ms per core-second, longest ${fmt(s.longest_ms, 1)} ms, ${fmt(s.paused_share * 100, 2)} % of the time paused`;
}

function report(r) {
  const find = (rows, label) => rows.find((x) => x.target === label);
  const lines = [];
  const m = r.machine;
  lines.push(`# Gateway benchmark — ${r.started_at.slice(0, 10)}`, '');
  lines.push(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GiB RAM, Node ${m.node}, ${m.platform}. Everything (load generator, fake upstream, proxy, gateway, Postgres, Redis) shares these cores.`,
    '',
  );
  if (m.cpu_stalls)
    lines.push(`Core pauses, measured before the run (a busy loop on every core, before any of the processes below started): ${stallLine(m.cpu_stalls)}.`, '');
  lines.push(
    `Command: \`npm run bench gateway${r.quick ? ' -- --quick' : ''}\` (gateway: auth on, usage ledger on; embedded = PGlite + in-process adapters, scaled = Postgres + Redis).`,
    '',
  );
  lines.push('| Scenario | Target | direct | pass-through | gateway embedded | gateway scaled | Result |', '|---|---|---|---|---|---|---|');
  const lat = r.scenarios.latency_c1;
  if (lat) {
    const d = find(lat, 'direct');
    for (const [k, limit] of [
      ['p50', 0.5],
      ['p99', 2],
    ]) {
      const cells = ['passthrough', 'gateway-embedded', 'gateway-scaled'].map((t) => find(lat, t));
      const added = cells
        .slice(1)
        .filter(Boolean)
        .map((c) => c[k] - d[k]);
      lines.push(
        `| non-streaming c=1, added latency ${k} | ≤ ${limit} ms | ${fmt(d[k], 3)} ms | ${cells[0] ? `+${fmt(cells[0][k] - d[k], 3)}` : 'n/a'} ms | ${cells[1] ? `+${fmt(cells[1][k] - d[k], 3)}` : 'n/a'} ms | ${cells[2] ? `+${fmt(cells[2][k] - d[k], 3)}` : 'n/a'} ms | ${added.every((a) => a <= limit) ? 'met' : 'missed'} |`,
      );
    }
  }
  const tp = r.scenarios.throughput_c200;
  if (tp) {
    const pt = find(tp, 'passthrough');
    const e = find(tp, 'gateway-embedded');
    const s = find(tp, 'gateway-scaled');
    const ratios = [e, s].filter(Boolean).map((x) => x.rps / pt.rps);
    lines.push(
      `| non-streaming c=200, 20 ms upstream, throughput | ≥ 60 % of pass-through | ${fmt(find(tp, 'direct').rps, 0)} req/s | ${fmt(pt.rps, 0)} req/s | ${e ? `${fmt(e.rps, 0)} req/s (${fmt((e.rps / pt.rps) * 100, 0)} %)` : 'n/a'} | ${s ? `${fmt(s.rps, 0)} req/s (${fmt((s.rps / pt.rps) * 100, 0)} %)` : 'n/a'} | ${ratios.every((x) => x >= 0.6) ? 'met' : 'missed'} |`,
    );
  }
  const st = r.scenarios.stream_ttft;
  if (st) {
    const d = find(st, 'direct');
    const cell = (t) => {
      const x = find(st, t);
      return x ? `+${fmt(x.ttft.p99 - d.ttft.p99, 3)} ms` : 'n/a';
    };
    const ok = ['gateway-embedded', 'gateway-scaled']
      .map((t) => find(st, t))
      .filter(Boolean)
      .every((x) => x.ttft.p99 - d.ttft.p99 <= 2 && x.completed === d.completed);
    lines.push(
      `| streaming 64×20 ms, added TTFT p99 (c=32 steady state, ${d.ttft.n} streams per target in ${d.roundP99?.length ?? 1} interleaved rounds) | ≤ 2 ms | ${fmt(d.ttft.p99, 3)} ms | ${cell('passthrough')} | ${cell('gateway-embedded')} | ${cell('gateway-scaled')} | ${ok ? 'met' : 'missed'} |`,
    );
  }
  const s512 = r.scenarios.streams_512;
  if (s512) {
    const cell = (t) => {
      const x = find(s512, t);
      return x ? `${x.completed}/512, max gap ${fmt(x.maxGapMs, 0)} ms` : 'n/a';
    };
    const ok = s512.filter((x) => x.target.startsWith('gateway')).every((x) => x.completed === 512 && x.errors === 0 && x.maxGapMs < 1000);
    lines.push(
      `| 512 concurrent streams complete, no stall | all complete | ${cell('direct')} | ${cell('passthrough')} | ${cell('gateway-embedded')} | ${cell('gateway-scaled')} | ${ok ? 'met' : 'missed'} |`,
    );
  }
  const mt = r.scenarios.messages_translation;
  if (mt) {
    const cell = (g) => {
      const n = find(mt, `${g} native`);
      const t = find(mt, `${g} translated`);
      return n && t
        ? { text: `native ${fmt(n.p50, 3)} / translated ${fmt(t.p50, 3)} ms (+${fmt(t.p50 - n.p50, 3)})`, d: t.p50 - n.p50 }
        : { text: 'n/a', d: 0 };
    };
    const e = cell('gateway-embedded');
    const s = cell('gateway-scaled');
    lines.push(
      `| /v1/messages translated to OpenAI vs native, p50 | ≤ +0.5 ms | ${fmt(find(mt, 'direct (anthropic upstream)').p50, 3)} ms | — | ${e.text} | ${s.text} | ${e.d <= 0.5 && s.d <= 0.5 ? 'met' : 'missed'} |`,
    );
  }
  const rt = r.scenarios.responses_translation;
  if (rt) {
    const cell = (g) => {
      const n = find(rt, `${g} chat`);
      const t = find(rt, `${g} responses`);
      const u = find(rt, `${g} responses unstored`);
      return n && t && u
        ? { text: `chat ${fmt(n.p50, 3)} / responses ${fmt(t.p50, 3)} ms (+${fmt(t.p50 - n.p50, 3)}; store:false +${fmt(u.p50 - n.p50, 3)})`, d: t.p50 - n.p50 }
        : { text: 'n/a', d: 0 };
    };
    const e = cell('gateway-embedded');
    const s = cell('gateway-scaled');
    lines.push(
      `| /v1/responses translated vs /v1/chat/completions, p50 | ≤ +0.5 ms | — | — | ${e.text} | ${s.text} | ${e.d <= 0.5 && s.d <= 0.5 ? 'met' : 'missed'} |`,
    );
  }
  const bu = r.scenarios.budgets;
  if (bu) {
    const cell = (g) => {
      const p = find(bu, `${g} unbudgeted`);
      const b = find(bu, `${g} budgeted`);
      return p && b
        ? { text: `${fmt(p.p50, 3)} → ${fmt(b.p50, 3)} ms (+${fmt(b.p50 - p.p50, 3)}; p99 +${fmt(b.p99 - p.p99, 3)})`, d: b.p50 - p.p50 }
        : { text: 'n/a', d: 0 };
    };
    const e = cell('gateway-embedded');
    const s = cell('gateway-scaled');
    lines.push(`| a tenant with a spend budget vs without, c=1 p50 | ≤ +1 ms | — | — | ${e.text} | ${s.text} | ${e.d <= 1 && s.d <= 1 ? 'met' : 'missed'} |`);
  }
  const soak = r.scenarios.soak;
  if (soak) {
    const drift = (soak.rss_end_mb - soak.rss_1min_mb) / soak.rss_1min_mb;
    lines.push(
      `| RSS after ${soak.minutes} min vs after 1 min (steady ${fmt(soak.rps, 0)} req/s + streams) | within 10 % | — | — | ${fmt(soak.rss_1min_mb, 1)} → ${fmt(soak.rss_end_mb, 1)} MB (${drift >= 0 ? '+' : ''}${fmt(drift * 100, 1)} %) | — | ${Math.abs(drift) <= 0.1 ? 'met' : 'missed'} |`,
    );
  }
  lines.push('', 'Raw numbers (all targets, p50/p99/errors) are in the JSON file next to this one.');
  return lines.join('\n');
}

main()
  .catch((err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(stopChildren);
