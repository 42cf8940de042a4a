#!/usr/bin/env node
/**
 * Server start benchmark: CPU seconds (user + system, every thread of the process, from /proc/<pid>/stat) and wall
 * seconds from spawn until `GET /healthz` answers 200, for
 *   - a plain Node HTTP server (`node -e "require('http').createServer(…).listen(port)"`: the baseline, same run);
 *   - `main.api.js` (scaled: a scratch Postgres database, migrated once before the measured starts, and Redis);
 *   - `main.js` (embedded: a fresh GATEWAY_DATA_DIR, seeded by one start before the measured ones);
 * each Hecate entry with and without NODE_COMPILE_CACHE (a directory per variant, filled by its warm-up start) and
 * with OTEL_EXPORTER_OTLP_ENDPOINT unset and set (set loads the telemetry SDK; the endpoint is a closed local port,
 * nothing is exported before /healthz answers);
 *   - Portkey's open-source gateway (`@portkey-ai/gateway`, installed once into ~/.cache/hecate-bench), until `GET /`;
 *   - `npm start` on the seeded embedded data directory (a second start: the build is current, so it only checks).
 * Every variant has one warm-up start (not counted), then the measured rounds run the variants in turn, so machine
 * noise spreads over all of them. Medians are reported, with the difference to and the ratio of the baseline's median.
 * Then memory: each of Portkey, the embedded server's first boot (a fresh data directory) and later start, the scaled
 * api and the scaled worker is started, left idle for 10 s after it answers, and its RSS and peak RSS (VmHWM) read.
 * Writes bench/results/server-start-<date>.{md,json}.
 *
 *   npm run bench server-start
 *   node bench/server-start/run.mjs --runs 5
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir, totalmem } from 'node:os';
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

/**
 * Spawns a variant (`node <args>` unless it names another command), polls its health path every 20 ms, and returns the
 * CPU and wall seconds at its first 200; with `idleMs`, also its RSS and peak RSS (MB) that long after.
 */
async function measureStart(label, v, { idleMs = 0 } = {}) {
  const port = await freePort();
  const t0 = performance.now();
  const args = typeof v.args === 'function' ? v.args(port) : v.args;
  const proc = spawn(v.command ?? process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...v.env, [v.portVar ?? 'PORT']: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: `npm start` runs node as a child, and both are stopped
  });
  children.add(proc);
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise((res) => proc.once('exit', res));
  const signal = (sig) => {
    try {
      process.kill(-proc.pid, sig);
    } catch {
      // gone
    }
  };
  try {
    const until = Date.now() + 120_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${label} exited (${proc.exitCode}):\n${out}`);
      if (Date.now() > until) throw new Error(`${label} did not answer ${v.health ?? '/healthz'}:\n${out}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}${v.health ?? '/healthz'}`);
        if (res.ok) {
          const cpu = v.command ? NaN : cpuSeconds(proc.pid);
          const wall = (performance.now() - t0) / 1000;
          await res.arrayBuffer();
          if (!idleMs) return { cpu, wall };
          await sleep(idleMs);
          return { cpu, wall, ...rssOf(v.command ? nodeChild(proc.pid) : proc.pid) };
        }
        await res.arrayBuffer();
      } catch (err) {
        if (err instanceof Error && /ENOENT|ESRCH/.test(err.message)) throw err;
        // not listening yet
      }
      await sleep(20);
    }
  } finally {
    signal('SIGTERM');
    const hard = setTimeout(() => signal('SIGKILL'), 15_000);
    await exited;
    clearTimeout(hard);
    children.delete(proc);
  }
}

/** RSS and peak RSS (VmHWM) of a process, in MB. */
function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** The node process `npm start` runs (a descendant of npm's pid whose command line names dist/src/main.js). */
function nodeChild(pid) {
  const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  for (const kid of kids) {
    if (readFileSync(`/proc/${kid}/cmdline`, 'utf8').includes('dist/src/main.js')) return kid;
    const deeper = nodeChild(kid);
    if (deeper) return deeper;
  }
  return 0;
}

const PORTKEY_VERSION = '1.15.2';
/** Portkey's gateway from the npm registry, installed once per machine outside the repository. */
function portkeyEntry() {
  const dir = join(homedir(), '.cache', 'hecate-bench', `portkey-${PORTKEY_VERSION}`);
  const entry = join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!existsSync(entry)) {
    mkdirSync(dir, { recursive: true });
    log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir}`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--no-save', `@portkey-ai/gateway@${PORTKEY_VERSION}`], { stdio: 'ignore' });
  }
  return entry;
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
        // On by default since core/compile-cache.ts; off is Node's own switch.
        if (cache) env.NODE_COMPILE_CACHE = join(cacheRoot, key);
        else env.NODE_DISABLE_COMPILE_CACHE = '1';
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
  const portkey = portkeyEntry();
  variants.push(
    {
      key: 'portkey',
      label: `Portkey gateway ${PORTKEY_VERSION} (node build/start-server.js --headless), until GET / answers`,
      args: (port) => [portkey, `--port=${port}`, '--headless'],
      env: {},
      health: '/',
    },
    {
      key: 'npm-start',
      mode: 'embedded',
      label: '`npm start` (embedded, a second start: the build is current)',
      command: 'npm',
      args: ['start'],
      env: { ...NODE_ENV_VARS, ...entries.embedded.env },
    },
  );
  const only = opt('--only', '').split(',').filter(Boolean);
  if (only.length) variants.splice(1, variants.length, ...variants.slice(1).filter((v) => only.includes(v.key)));
  try {
    // Seeding, not measured: the scaled database's migrations, the embedded data directory's first start.
    const scaled = { args: [...NODE_FLAGS['main.api.js'], join(DIST, 'src', 'main.api.js')], env: { ...NODE_ENV_VARS, ...entries.scaled.env } };
    const embedded = { args: [...NODE_FLAGS['main.js'], join(DIST, 'src', 'main.js')], env: { ...NODE_ENV_VARS, ...entries.embedded.env } };
    await measureStart('migrate', { ...scaled, env: { ...scaled.env, GATEWAY_MIGRATE_ON_BOOT: 'true' } });
    await measureStart('seed', embedded);
    // One warm-up start per variant (fills its compile cache, the page cache).
    for (const v of variants) {
      const w = await measureStart(v.key, v);
      log(`warm-up ${v.key}: cpu ${f2(w.cpu)} s, wall ${w.wall.toFixed(2)} s`);
    }
    const samples = Object.fromEntries(variants.map((v) => [v.key, []]));
    const load = [];
    for (let round = 1; round <= RUNS; round++) {
      load.push(loadavg()[0]);
      for (const v of variants) {
        const s = await measureStart(v.key, v);
        samples[v.key].push(s);
        log(`round ${round} ${v.key}: cpu ${f2(s.cpu)} s, wall ${s.wall.toFixed(2)} s`);
      }
    }
    const memory = await footprint({ portkey, scaled, embedded, rounds: Number(opt('--memory-runs', 3)) });
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
      memory,
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

/**
 * Memory after start: each process left idle 10 s after it answers, then its RSS and peak RSS read; `rounds` times,
 * the processes in turn. The embedded first boot gets a fresh data directory every round; the worker's health is on
 * its side port.
 */
async function footprint({ portkey, scaled, embedded, rounds }) {
  const worker = { args: [...NODE_FLAGS['main.worker.js'], join(DIST, 'src', 'main.worker.js')], env: scaled.env, portVar: 'WORKER_HEALTH_PORT' };
  const subjects = [
    { key: 'portkey', label: 'Portkey gateway (idle)', v: { args: (port) => [portkey, `--port=${port}`, '--headless'], env: {}, health: '/' } },
    { key: 'embedded-first-boot', label: 'main.js (embedded), first boot: a new data directory', fresh: true, v: embedded },
    { key: 'embedded', label: 'main.js (embedded), existing data directory', v: embedded },
    { key: 'api', label: 'main.api.js (scaled api)', v: scaled },
    { key: 'worker', label: 'main.worker.js (scaled worker)', v: worker },
  ];
  const samples = Object.fromEntries(subjects.map((s) => [s.key, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const s of subjects) {
      const dir = s.fresh ? mkdtempSync(join(tmpdir(), 'hecate-bench-first-boot-')) : undefined;
      const v = dir ? { ...s.v, env: { ...s.v.env, GATEWAY_DATA_DIR: dir } } : s.v;
      const m = await measureStart(s.key, v, { idleMs: 10_000 });
      if (dir) rmSync(dir, { recursive: true, force: true });
      samples[s.key].push(m);
      log(`memory round ${round} ${s.key}: rss ${m.rss.toFixed(0)} MB, peak ${m.hwm.toFixed(0)} MB`);
    }
  }
  return subjects.map((s) => ({
    key: s.key,
    label: s.label,
    rss_mb: stats(samples[s.key].map((m) => m.rss)),
    peak_mb: stats(samples[s.key].map((m) => m.hwm)),
    samples: samples[s.key],
  }));
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
  const wall = Object.fromEntries(rows.map((r) => [r.key, r.wall.p50]));
  const ratio = (a, b) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)} ×` : 'n/a');
  lines.push(
    '',
    'Targets (issue 33; ratios of wall medians in this run):',
    '',
    `- a second \`npm start\` ÷ the built embedded server's own start: **${ratio(wall['npm-start'], wall.embedded)}** (target ≤ 1.2 ×)`,
    `- the built embedded server's start (existing data directory) ÷ Portkey's start: **${ratio(wall.embedded, wall.portkey)}** (target ≤ 6 ×); with the compile cache: ${ratio(wall['embedded+cache'], wall.portkey)}`,
    `- the scaled api's start ÷ Portkey's start: ${ratio(wall.scaled, wall.portkey)}`,
  );
  if (out.memory) {
    const pk = out.memory.find((m) => m.key === 'portkey');
    const targets = { 'embedded-first-boot': ['peak', 600], embedded: ['rss', 350], api: ['rss', 200], worker: ['rss', 250] };
    lines.push('', `Memory (MB; ${out.memory[0].samples.length} starts each, medians; RSS 10 s after the first answer, peak = VmHWM then):`, '');
    lines.push('| process | RSS | peak | RSS ÷ Portkey idle | target |', '|---|---|---|---|---|');
    for (const m of out.memory) {
      const t = targets[m.key];
      lines.push(
        `| ${m.label} | ${m.rss_mb.p50.toFixed(0)} | ${m.peak_mb.p50.toFixed(0)} | ${m === pk ? '1' : ratio(m.rss_mb.p50, pk.rss_mb.p50)} | ${t ? `${t[0]} ≤ ${t[1]} MB: ${(t[0] === 'peak' ? m.peak_mb.p50 : m.rss_mb.p50) <= t[1] ? 'met' : 'not met'}` : '—'} |`,
      );
    }
  }
  lines.push('', 'Effects (differences of CPU medians, seconds):', '');
  for (const mode of ['scaled', 'embedded']) {
    if (!(mode in by) || !(`${mode}+cache+otel` in by)) continue;
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
