#!/usr/bin/env node
/**
 * Server start benchmark: CPU seconds (user + system, every thread of the process, from /proc/<pid>/stat) and wall
 * seconds from spawn until `GET /healthz` answers 200, for
 *   - a plain Node HTTP server (`node -e "require('http').createServer(…).listen(port)"`: the baseline, same run);
 *   - `main.api.js` (scaled: a scratch Postgres database, migrated once before the measured starts, and Redis);
 *   - `main.js` (embedded: a fresh GATEWAY_DATA_DIR, seeded by one start before the measured ones);
 * each Hecate entry with and without NODE_COMPILE_CACHE (a directory per variant, filled by its warm-up start) and
 * with OTEL_EXPORTER_OTLP_ENDPOINT unset and set (set loads the telemetry SDK; the endpoint is a closed local port,
 * nothing is exported before /healthz answers). Every variant has one warm-up start (not counted), then the measured
 * rounds run the variants in turn, so machine noise spreads over all of them. Medians are reported, with the
 * difference to and the ratio of the baseline's median.
 * Writes bench/results/server-start-<date>.{md,json}.
 *
 *   npm run bench server-start
 *   node bench/server-start/run.mjs --runs 5
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { scratchDatabase } from '../lib/database.mjs';
import { sleep, stats } from '../lib/load.mjs';
import { DIST, NODE_ENV_VARS, NODE_FLAGS, ROOT, children, freePort } from '../lib/processes.mjs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : argv[i + 1];
};
const RUNS = Number(opt('--runs', 5));
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TOKEN = 'bench-server-start-token-0123456789abcdef';
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const log = (s) => process.stdout.write(`${s}\n`);

/** CPU seconds (user + system, all threads) the process has used so far. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** Spawns `node <args>`, polls /healthz every 20 ms, and returns the CPU and wall seconds at its first 200. */
async function measureStart(label, args, env) {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise((res) => proc.once('exit', res));
  try {
    const until = Date.now() + 120_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${label} exited (${proc.exitCode}):\n${out}`);
      if (Date.now() > until) throw new Error(`${label} did not answer /healthz:\n${out}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.ok) {
          const cpu = cpuSeconds(proc.pid);
          const wall = (performance.now() - t0) / 1000;
          await res.arrayBuffer();
          return { cpu, wall };
        }
        await res.arrayBuffer();
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
  } finally {
    proc.kill('SIGTERM');
    const hard = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(hard);
    children.delete(proc);
  }
}

async function main() {
  const started = new Date();
  const machine = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version };
  log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}; dist=${DIST}; ${RUNS} runs per variant`);
  const db = await scratchDatabase('hecate_bench_start');
  const dataDir = mkdtempSync(join(tmpdir(), 'hecate-bench-start-'));
  const cacheRoot = mkdtempSync(join(tmpdir(), 'hecate-bench-compile-cache-'));
  const otelPort = await freePort(); // closed: nothing listens there
  const entries = {
    scaled: {
      file: 'main.api.js',
      env: { DATABASE_URL: db.url, REDIS_URL: REDIS, GATEWAY_REDIS_PREFIX: `benchstart${Date.now()}`, GATEWAY_AUTH_TOKEN: TOKEN },
    },
    embedded: { file: 'main.js', env: { GATEWAY_DATA_DIR: dataDir, GATEWAY_AUTH_TOKEN: TOKEN } },
  };
  const variants = [
    { key: 'baseline', label: 'plain node http server', args: ['-e', "require('http').createServer((q,s)=>s.end('ok')).listen(+process.env.PORT)"], env: {} },
  ];
  for (const [mode, e] of Object.entries(entries)) {
    for (const cache of [false, true]) {
      for (const otel of [false, true]) {
        const key = `${mode}${cache ? '+cache' : ''}${otel ? '+otel' : ''}`;
        const env = { ...NODE_ENV_VARS, ...e.env };
        if (cache) env.NODE_COMPILE_CACHE = join(cacheRoot, key);
        if (otel) env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${otelPort}`;
        variants.push({
          key,
          mode,
          cache,
          otel,
          label: `${e.file} (${mode}), compile cache ${cache ? 'on' : 'off'}, OTLP endpoint ${otel ? 'set' : 'unset'}`,
          args: [...NODE_FLAGS[e.file], join(DIST, 'src', e.file)],
          env,
        });
      }
    }
  }
  try {
    // Seeding, not measured: the scaled database's migrations, the embedded data directory's first start.
    await measureStart('migrate', variants.find((v) => v.key === 'scaled').args, {
      ...variants.find((v) => v.key === 'scaled').env,
      GATEWAY_MIGRATE_ON_BOOT: 'true',
    });
    await measureStart('seed', variants.find((v) => v.key === 'embedded').args, variants.find((v) => v.key === 'embedded').env);
    // One warm-up start per variant (fills its compile cache, the page cache).
    for (const v of variants) {
      const w = await measureStart(v.key, v.args, v.env);
      log(`warm-up ${v.key}: cpu ${w.cpu.toFixed(2)} s, wall ${w.wall.toFixed(2)} s`);
    }
    const samples = Object.fromEntries(variants.map((v) => [v.key, []]));
    const load = [];
    for (let round = 1; round <= RUNS; round++) {
      load.push(loadavg()[0]);
      for (const v of variants) {
        const s = await measureStart(v.key, v.args, v.env);
        samples[v.key].push(s);
        log(`round ${round} ${v.key}: cpu ${s.cpu.toFixed(2)} s, wall ${s.wall.toFixed(2)} s`);
      }
    }
    const rows = variants.map((v) => {
      const spread = (xs) => ({ ...stats(xs), min: Math.min(...xs) });
      const cpu = spread(samples[v.key].map((s) => s.cpu));
      const wall = spread(samples[v.key].map((s) => s.wall));
      return { key: v.key, label: v.label, mode: v.mode, cache: v.cache, otel: v.otel, cpu, wall, samples: samples[v.key] };
    });
    const base = rows[0];
    const out = {
      date: started.toISOString().slice(0, 10),
      started_at: started.toISOString(),
      machine,
      dist: DIST,
      runs: RUNS,
      load_average_1m: load,
      clk_tck: CLK_TCK,
      baseline: base,
      variants: rows.slice(1),
    };
    const md = report(out, rows);
    log(`\n${md}`);
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', `server-start-${out.date}.md`), md);
    writeFileSync(join(ROOT, 'bench', 'results', `server-start-${out.date}.json`), `${JSON.stringify(out, null, 2)}\n`);
    log(`wrote bench/results/server-start-${out.date}.{md,json}`);
  } finally {
    await db.drop().catch(() => undefined);
  }
}

const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

function report(out, rows) {
  const base = rows[0];
  const lines = [
    `# server-start bench ${out.date}`,
    '',
    `Machine: ${out.machine.cores} cores, ${out.machine.memory_gb} GiB, ${out.machine.cpu}, Node ${out.machine.node}. ${out.runs} measured starts per variant, the variants taken in turn each round, after one warm-up start each; medians. CPU = user + system seconds of the process (all threads, /proc/<pid>/stat, ${1000 / out.clk_tck} ms ticks) when GET /healthz first answers 200 (polled every 20 ms); wall = spawn → that answer. Load average (1 min) at each round's start: ${out.load_average_1m.map((l) => l.toFixed(2)).join(', ')}.`,
    '',
    `Command: \`npm run bench server-start\`. Scaled = \`main.api.js\` on a migrated scratch Postgres database and Redis; embedded = \`main.js\` on a data directory seeded by one start. Launch flags as everywhere (\`bench/lib/processes.mjs\`: ${NODE_FLAGS['main.api.js'].join(' ')} on the api, without the old-space cap on main.js; MALLOC_ARENA_MAX=2). NODE_COMPILE_CACHE: one directory per variant, filled by its warm-up start. OTLP endpoint set: a closed local port.`,
    '',
    '| variant | CPU s, median (min–max) | CPU − baseline, s | CPU ÷ baseline | wall s, median (min–max) |',
    '|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const isBase = r === base;
    lines.push(
      `| ${r.label} | ${f2(r.cpu.p50)} (${f2(r.cpu.min)}–${f2(r.cpu.max)}) | ${isBase ? '—' : `+${f2(r.cpu.p50 - base.cpu.p50)}`} | ${isBase ? '1' : `${(r.cpu.p50 / base.cpu.p50).toFixed(1)} ×`} | ${f2(r.wall.p50)} (${f2(r.wall.min)}–${f2(r.wall.max)}) |`,
    );
  }
  const by = Object.fromEntries(rows.map((r) => [r.key, r.cpu.p50]));
  lines.push('', 'Effects (differences of CPU medians, seconds):', '');
  for (const mode of ['scaled', 'embedded']) {
    lines.push(
      `- ${mode}: compile cache ${f2(by[`${mode}+cache`] - by[mode])} (OTLP unset), ${f2(by[`${mode}+cache+otel`] - by[`${mode}+otel`])} (OTLP set); OTLP endpoint set ${f2(by[`${mode}+otel`] - by[mode])} (no cache), ${f2(by[`${mode}+cache+otel`] - by[`${mode}+cache`])} (cache)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    process.stderr.write(`${err.stack ?? err}\n`);
    process.exit(1);
  });
