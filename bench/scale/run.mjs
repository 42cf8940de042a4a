#!/usr/bin/env node
/**
 * Scale benchmark ("Rolling restart and soak"). Scaled mode: a scratch Postgres database, a Redis prefix,
 * 2 api and 2 worker processes, the fake upstream in its own process (20 ms latency, 16 chunks paced 20 ms), and a
 * steady mixed load (clients.mjs): /v1 calls streamed and not, /v1 calls recorded in a chat session, Agent Chat model
 * turns streamed, shell runs and agent_loop runs, and subscribers of the public events feed.
 *   1. Rolling restart: under the load, every api and worker process in turn is replaced (the new one started and
 *      healthy first, then SIGTERM to the old one, which stays in the client-side rotation for --lb-lag-ms). Then the
 *      load stops, every run and turn is waited for, and the checks (checks.mjs) count what every request, run,
 *      turn and feed subscriber got.
 *   2. Soak: a fresh deployment under the same load, no restarts, for --soak-minutes; RSS (broken down: V8's heap
 *      spaces, external memory, malloc arenas, other anonymous and file-backed pages) and event-loop delay of each
 *      process at 1 minute, every minute and at the end; the same checks.
 * Writes bench/results/scale-<date>[-quick].{md,json}.
 *
 *   npm run bench scale                                  # restart + 30-minute soak (run on an idle machine)
 *   node bench/scale/run.mjs --quick                     # 2 minutes of load around the restarts, 1-minute soak
 *   node bench/scale/run.mjs --only restart              # one part
 *   node bench/scale/run.mjs --soak-minutes 10 --lease-seconds 10 --lb-lag-ms 1000 --settle-seconds 10
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { measureCpuStalls } from '../lib/cpu-stalls.mjs';
import { sleep } from '../lib/load.mjs';
import { ROOT, start, stopChildren } from '../lib/processes.mjs';
import { checkAmbiguous, checkChatSessions, checkFeed, checkHeld, checkRuns, checkTurns, readFeed, waitTerminal } from './checks.mjs';
import { loadContext, PROFILE, startDrainProbes, startLoad } from './clients.mjs';
import { Deployment, SHUTDOWN_GRACE_MS } from './deployment.mjs';
import { dispatcher, Ledger, Router } from './http.mjs';
import { renderMarkdown } from './report.mjs';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? fallback : argv[i + 1];
};
const ONLY = opt('only', undefined);
const CONFIG = {
  quick: QUICK,
  lease_seconds: Number(opt('lease-seconds', 10)),
  shutdown_grace_ms: SHUTDOWN_GRACE_MS,
  lb_lag_ms: Number(opt('lb-lag-ms', 1000)),
  settle_seconds: Number(opt('settle-seconds', QUICK ? 3 : 10)),
  load_before_restarts_s: Number(opt('warm-seconds', QUICK ? 30 : 60)),
  load_after_restarts_s: Number(opt('after-seconds', QUICK ? 30 : 60)),
  soak_minutes: Number(opt('soak-minutes', QUICK ? 1 : 30)),
  sample_every_s: QUICK ? 10 : 15,
  upstream: { latency_ms: 20, chunks: 16, chunk_interval_ms: 20 },
  profile: PROFILE,
};
const T0 = Date.now();
const log = (s) => process.stdout.write(`${s}\n`);
const at = () => `${((Date.now() - T0) / 1000).toFixed(0)}s`;

async function deploy(label, upstream, router) {
  const d = new Deployment({ label, upstreamUrl: upstream.info.url, leaseSeconds: CONFIG.lease_seconds, router, t0: T0 });
  await d.open();
  for (const role of ['api', 'api', 'worker', 'worker']) await d.start(role);
  return d;
}

/** Samples every process every `sample_every_s` until `stop()`; answers the samples' timer. */
function sampler(d, phaseStart) {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await d.sample(phaseStart);
      const until = Date.now() + CONFIG.sample_every_s * 1000;
      while (!stopped && Date.now() < until) await sleep(200);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** Stops the load, waits for every run and turn, and runs every check. */
async function finish(d, ctx, load) {
  log(`${at()} stopping the load`);
  const stoppedAt = Date.now();
  let stopped = false;
  const stopping = load.stop().finally(() => (stopped = true));
  // What the load is still waiting for, every 30 s (requests end by themselves at REQUEST_LIMIT_MS).
  while (!stopped) {
    await Promise.race([stopping, sleep(30_000)]);
    const slow = [...ctx.active].filter((a) => Date.now() - a.since > 30_000);
    if (!stopped && slow.length)
      log(`${at()} still waiting for: ${slow.map((a) => `${a.kind} ${a.path} on ${a.api} for ${Math.round((Date.now() - a.since) / 1000)} s`).join('; ')}`);
  }
  await stopping;
  const stopMs = Date.now() - stoppedAt;
  log(`${at()} load stopped (${stopMs} ms); waiting for every run and turn to be terminal`);
  const terminal = await waitTerminal(d.pg, 3 * CONFIG.lease_seconds * 1000 + 60_000);
  log(`${at()} terminal after ${terminal.waited_ms} ms (${terminal.still_active_runs_count} runs, ${terminal.still_active_turns_count} turns still active)`);
  await sleep(2000);
  const feed = await readFeed(ctx);
  log(`${at()} read back ${feed.length} feed events; checking runs`);
  const runs = await checkRuns(ctx, d.pg, feed);
  const held = await checkHeld(d.pg, d.history, feed);
  const feedCheck = await checkFeed(ctx, feed);
  await load.subscribers;
  const turns = await checkTurns(ctx, d.pg);
  const chat = await checkChatSessions(ctx);
  const ambiguous = await checkAmbiguous(ctx, d.pg);
  return {
    load_stop_ms: stopMs,
    terminal,
    requests: ctx.ledger.kinds,
    incidents: Object.values(ctx.ledger.incidents),
    request_samples: ctx.ledger.samples,
    runs,
    held_at_sigterm: held,
    feed: feedCheck,
    turns,
    chat_sessions: chat,
    ambiguous,
  };
}

/**
 * One deployment under the load: `during(d)` runs while the load does (restarts, or only time passing), then the load
 * stops and every check runs. Processes are sampled throughout, and once more at the end of `during`.
 */
async function phase(label, upstream, during) {
  const router = new Router();
  const d = await deploy(label, upstream, router);
  const ctx = loadContext(router, new Ledger(T0));
  const phaseStart = Date.now();
  const stopSampling = sampler(d, phaseStart);
  const load = startLoad(ctx);
  try {
    await during(d, phaseStart, ctx);
    const loadSeconds = +((Date.now() - phaseStart) / 1000).toFixed(1);
    await stopSampling();
    await d.sample(phaseStart);
    const out = await finish(d, ctx, load);
    const processes = d.procs.map((p) => ({ label: p.label, role: p.role, pid: p.pid, exit: p.exit, samples: p.samples }));
    return { load_seconds: loadSeconds, steps: d.history, ...out, processes, logs: d.logSummary(), log_dir: d.logDir };
  } finally {
    ctx.stopping = true;
    ctx.feedAbort.abort();
    await d.close();
  }
}

/** Before a worker's SIGTERM: drain probes until it holds one of them (at most 4 rounds of 2). */
async function drainProbes(ctx, d, worker) {
  if (worker.role !== 'worker') return;
  for (let round = 0; round < 4; round++) {
    const probes = await startDrainProbes(ctx, 2);
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      if ((await d.heldBy(worker)).runs.some((id) => probes.includes(id))) return;
      await sleep(100);
    }
  }
}

const restartPhase = (upstream) => {
  log(`\n${at()} == rolling restart ==`);
  return phase('restart', upstream, async (d, _start, ctx) => {
    log(`${at()} load running; ${CONFIG.load_before_restarts_s} s before the first SIGTERM`);
    await sleep(CONFIG.load_before_restarts_s * 1000);
    const original = [...d.procs];
    for (const old of [original[0], original[2], original[1], original[3]]) {
      await d.replace(old, { lbLagMs: CONFIG.lb_lag_ms, settleMs: CONFIG.settle_seconds * 1000, log, beforeSigterm: (w) => drainProbes(ctx, d, w) });
    }
    log(`${at()} every process replaced; ${CONFIG.load_after_restarts_s} s more load`);
    await sleep(CONFIG.load_after_restarts_s * 1000);
  });
};

async function soakPhase(upstream) {
  log(`\n${at()} == soak: ${CONFIG.soak_minutes} min ==`);
  const out = await phase('soak', upstream, async (d, phaseStart) => {
    const soakMs = CONFIG.soak_minutes * 60_000;
    for (let m = 1; m * 60_000 <= soakMs; m++) {
      await sleep(phaseStart + m * 60_000 - Date.now());
      log(`${at()} soak minute ${m}:`);
      for (const p of d.live()) log(`  ${p.label} ${memoryLine(p.samples.at(-1))}`);
    }
    await sleep(Math.max(0, phaseStart + soakMs - Date.now()));
  });
  return { ...out, memory: memoryReport(out.processes) };
}

/** One sample's memory in one line (MB): RSS, V8's spaces, external, malloc arenas, other anonymous, file-backed. */
function memoryLine(s) {
  if (!s) return '?';
  const sp = s.heap_space_total_mb ?? {};
  return `rss ${s.rss_mb} = anon ${s.rss_anon_mb} + file ${s.rss_file_mb}; heap total ${s.heap_total_mb} (new ${sp.new}, old ${sp.old}, code ${sp.code}, lo ${sp.large_object}) used ${s.heap_used_mb}; external ${s.external_mb}; malloc arenas ${s.malloc_arenas} × = ${s.malloc_arenas_mb}, brk ${s.brk_heap_mb}; other anon ${s.other_anon_mb}; threads ${s.threads}`;
}

/** Per process: the sample nearest 1 minute (a third of a shorter soak) against the last one. */
function memoryReport(processes) {
  const early = Math.min(60, (CONFIG.soak_minutes * 60) / 3);
  return processes.map((p) => {
    const first = p.samples.reduce((best, s) => (Math.abs(s.t_s - early) < Math.abs((best?.t_s ?? Infinity) - early) ? s : best), undefined);
    const last = p.samples.at(-1);
    // The sample nearest each whole minute, for the report's timeline.
    const minutes = [];
    for (let m = 1; m <= CONFIG.soak_minutes; m++) {
      const s = p.samples.reduce((best, x) => (Math.abs(x.t_s - m * 60) < Math.abs((best?.t_s ?? Infinity) - m * 60) ? x : best), undefined);
      if (s) minutes.push(s);
    }
    return {
      label: p.label,
      role: p.role,
      early: first,
      end: last,
      minutes,
      rss_growth_pct: first && last ? +(((last.rss_mb - first.rss_mb) / first.rss_mb) * 100).toFixed(1) : null,
    };
  });
}

async function main() {
  const results = {
    date: new Date().toISOString(),
    commit: execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']).toString().trim(),
    machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
    config: CONFIG,
    load_average_start: loadavg().map((x) => +x.toFixed(2)),
  };
  log('core pauses (5 s busy loop per core) …');
  results.core_pauses = await measureCpuStalls(5);
  const upstream = await start('upstream', [
    'test/support/fake-upstream/cli.js',
    '--port',
    '0',
    '--latency-ms',
    String(CONFIG.upstream.latency_ms),
    '--chunks',
    String(CONFIG.upstream.chunks),
    '--chunk-interval-ms',
    String(CONFIG.upstream.chunk_interval_ms),
  ]);
  try {
    if (!ONLY || ONLY === 'restart') results.restart = await restartPhase(upstream);
    if ((!ONLY || ONLY === 'soak') && CONFIG.soak_minutes > 0) results.soak = await soakPhase(upstream);
  } finally {
    stopChildren();
  }
  results.load_average_end = loadavg().map((x) => +x.toFixed(2));
  const md = renderMarkdown(results);
  log(`\n${md}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const name = `scale-${results.date.slice(0, 10)}${QUICK ? '-quick' : ''}${ONLY ? `-${ONLY}` : ''}`;
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(results, null, 2));
  writeFileSync(join(dir, `${name}.md`), `${md}\n`);
  log(`wrote bench/results/${name}.{md,json}`);
}

main().then(
  async () => {
    await dispatcher.close().catch(() => undefined);
    process.exit(0);
  },
  (err) => {
    console.error(err);
    stopChildren();
    process.exit(1);
  },
);
