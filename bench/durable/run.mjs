#!/usr/bin/env node
/**
 * Durable-runtime benchmark: Hecate's agent_loop against DBOS Transact and a plain Node loop, on the same scripted
 * model server (its own process, OpenAI chat completions streamed, answering at once) and the same Postgres.
 *
 * One run = 3 model calls: a `read_file` of notes.txt, a `file_write` of out.txt, a final answer; every request
 * carries Hecate's 11 built-in tool schemas. The workspace is a plain directory holding notes.txt (~1 KB of random
 * base64, so TOAST compression does not hide what is stored). Contenders, each in its own process(es):
 *   plain           the loop as plain calls (bench/durable/loop-child.mjs plain), nothing durable;
 *   dbos            DBOS Transact @dbos-inc/dbos-sdk@5.3.0 (installed once into ~/.cache/hecate-bench/dbos-5.3.0):
 *                   one workflow per run, each model and tool call a DBOS.runStep, its system database a scratch
 *                   Postgres database (loop-child.mjs dbos);
 *   hecate scaled   main.api.js + one main.worker.js on a scratch Postgres database and Redis, runs created with
 *                   POST /hecate/v1/tasks (agent_loop, working_directory = the workspace, copied per run) + /start,
 *                   their ends read from the public feed (GET /hecate/v1/events/stream, terminal events only);
 *   hecate embedded main.js (PGlite), the same way.
 * The loop children run with the Hecate worker's launch flags. Per contender:
 *   - one run end to end at c=1 (create → terminal as the client sees it), p50/p90; each run is checked: its
 *     model calls and the file its file_write wrote;
 *   - turns/s with 50 and with 200 runs in flight (closed loop; after as many runs as are in flight have ended, a
 *     fixed window; turns = responses the model server sent in it);
 *   - CPU per model turn over that window: the contender's processes (with reaped children) + every postgres and
 *     redis-server process, nothing subtracted; the model server's and this process's reported apart;
 *   - rows written per run (pg_stat_user_tables n_tup_ins/upd/del deltas) and bytes stored per run (total relation
 *     size of the user tables) for runs of 3, 8, 16, 32 and 64 model calls (dbos and hecate scaled; PGlite: n/a);
 * and on hecate scaled, the feed replay: N external events posted to one run (16 at once), then one fresh read of
 * GET /hecate/v1/events/stream from Last-Event-ID 0 to the last of them: all there, in order, read rate, whether the
 * server cut the reader. Prints a table and writes bench/results/durable-<date>.{md,json}.
 *
 *   npm run bench durable
 *   node bench/durable/run.mjs --quick                   # ~5 minutes
 *   node bench/durable/run.mjs --only dbos,scaled        # some contenders (durable-<date>-only-dbos-scaled.*)
 *   node bench/durable/run.mjs --only scaled --feed      # with the 100,000-event feed replay (~5 min of posting)
 *   node bench/durable/run.mjs --feed-events 0           # no feed replay
 */
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDatabase } from '../lib/database.mjs';
import { children, DIST, NODE_ENV_VARS, NODE_FLAGS, ROOT, start, stopChildren } from '../lib/processes.mjs';
import { closedLoop, promptOf, sequential, writesPerRun } from './measure.mjs';
import { feedReplay, startEmbedded, startScaled, TOKEN } from './hecate.mjs';
import { machineFacts, render } from './report.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const QUICK = argv.includes('--quick');
const ONLY = opt('--only', 'plain,dbos,scaled,embedded').split(',');
const DBOS_VERSION = '5.3.0';
const CONFIG = {
  quick: QUICK,
  turns: 3,
  warmup: 10,
  sequential: QUICK ? 8 : 20,
  inflight: [50, 200],
  windowMs: QUICK ? 8_000 : 30_000,
  storageTurns: [3, 8, 16, 32, 64],
  storageRuns: QUICK ? 6 : 20,
  storageInflight: QUICK ? 4 : 6,
  feedEvents: Number(opt('--feed-events', argv.includes('--feed') ? 100_000 : QUICK ? 3_000 : 10_000)),
};
const log = (s) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

/** DBOS Transact from the npm registry, installed once per machine outside the repository. */
function dbosDir() {
  const dir = join(homedir(), '.cache', 'hecate-bench', `dbos-${DBOS_VERSION}`);
  if (!existsSync(join(dir, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json'))) {
    mkdirSync(dir, { recursive: true });
    log(`installing @dbos-inc/dbos-sdk@${DBOS_VERSION} into ${dir}`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--no-save', `@dbos-inc/dbos-sdk@${DBOS_VERSION}`], { stdio: 'ignore' });
  }
  return dir;
}

/** Temporary directories of this run (workspaces, Hecate's run workspaces and data), removed at the end. */
const temps = [];
const tempDir = (name) => {
  temps.push(mkdtempSync(join(tmpdir(), `hecate-bench-durable-${name}-`)));
  return temps.at(-1);
};

/** A workspace directory holding notes.txt: 1 KB of random base64 in lines (incompressible, as stored). */
function workspace(name, notes) {
  const dir = tempDir(name);
  writeFileSync(join(dir, 'notes.txt'), notes);
  return dir;
}

/** The build's built-in tools as its agent loop sends them to the model (names, descriptions, JSON schemas). */
function builtinTools() {
  const { BUILTIN_TOOLS } = createRequire(import.meta.url)(join(ROOT, DIST, 'src/modules/agent-loop/builtin-tools.js'));
  return BUILTIN_TOOLS.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

/**
 * The plain or DBOS contender: loop-child.mjs forked with the worker's launch flags, runs sent over IPC; `ms` is
 * the time from sending a run to its answer arriving here. `verify` checks the turns and the workspace's out.txt.
 */
async function loopContender(label, engine, config, extra = {}) {
  const child = fork(join(HERE, 'loop-child.mjs'), [engine, JSON.stringify({ ...config, tools: builtinTools() })], {
    execArgv: NODE_FLAGS['main.worker.js'],
    env: { ...process.env, ...NODE_ENV_VARS },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const pending = new Map();
  let seq = 0;
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const err = new Error(`${label} exited (${code}):\n${output}`);
      for (const p of pending.values()) p.reject(err);
      reject(err);
    });
    child.on('message', (m) => {
      if (m.ready) return resolve();
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.ok) p.resolve({ ms: performance.now() - p.t0, turns: m.turns });
      else p.reject(new Error(m.error));
    });
  });
  return {
    label,
    engineProcs: { [engine]: child.pid },
    databaseUrl: null,
    ...extra,
    run: (prompt) =>
      new Promise((resolve, reject) => {
        const id = ++seq;
        pending.set(id, { resolve, reject, t0: performance.now() });
        child.send({ id, prompt });
      }),
    async verify(result, tag, turns) {
      if (result.turns !== turns) throw new Error(`${label}: ${result.turns} model calls, expected ${turns}`);
      if (!readFileSync(join(config.workspace, 'out.txt'), 'utf8').includes(tag)) throw new Error(`${label}: out.txt does not hold the run's file_write`);
    },
    async close() {
      const exited = new Promise((r) => child.once('exit', r));
      child.disconnect();
      await exited;
      await extra.drop?.();
    },
  };
}

/** Every measurement on one contender; `writes` only where there is a Postgres database to read. */
async function measure(c, model) {
  log(`${c.label}: warm-up, then ${CONFIG.sequential} sequential runs`);
  for (let i = 0; i < CONFIG.warmup; i++) await c.run(promptOf(CONFIG.turns, `warm-${i}`));
  const result = { label: c.label, end_to_end_ms: await sequential(c, CONFIG.sequential, CONFIG.turns), closed_loop: [] };
  for (const inflight of CONFIG.inflight) {
    log(`${c.label}: ${inflight} runs in flight`);
    result.closed_loop.push(await closedLoop(c, model, { inflight, turns: CONFIG.turns, windowMs: CONFIG.windowMs }));
  }
  if (c.databaseUrl) {
    log(`${c.label}: rows and bytes per run, runs of ${CONFIG.storageTurns.join('/')} model calls`);
    const countRows = (turns) => !QUICK || turns === CONFIG.turns;
    result.writes = await writesPerRun(c, { turnCounts: CONFIG.storageTurns, runs: CONFIG.storageRuns, inflight: CONFIG.storageInflight, countRows });
  }
  return result;
}

/** Starts each contender selected in turn, measures it and stops it; the feed replay runs on hecate scaled. */
async function contenders(model, notes) {
  const hecateEnv = {
    GATEWAY_AUTH_TOKEN: TOKEN,
    GATEWAY_TASK_APPROVAL_POLICIES: 'none',
    GATEWAY_TASK_SANDBOX: 'none',
    GATEWAY_TASK_QUEUE_WORKERS: String(Math.max(...CONFIG.inflight)),
    GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: String(Math.max(...CONFIG.storageTurns)),
    PROVIDER_BENCH_BASE_URL: `${model.url}/v1`,
    PROVIDER_BENCH_KIND: 'local',
    GATEWAY_WORKSPACES_DIR: tempDir('runs'),
  };
  const starters = {
    plain: () => loopContender('plain', 'plain', { modelUrl: model.url, workspace: workspace('plain', notes) }),
    dbos: async () => {
      const db = await scratchDatabase('hecate_bench_durable_dbos');
      const config = { modelUrl: model.url, workspace: workspace('dbos', notes), dbosDir: dbosDir(), systemDatabaseUrl: db.url };
      return loopContender('dbos', 'dbos', config, { databaseUrl: db.url, drop: () => db.drop() });
    },
    scaled: () => startScaled(hecateEnv, workspace('hecate', notes)),
    embedded: () => startEmbedded({ ...hecateEnv, GATEWAY_DATA_DIR: tempDir('data') }, workspace('hecate', notes)),
  };
  const results = {};
  let feed = null;
  for (const key of ONLY) {
    log(`starting ${key}`);
    const c = await starters[key]();
    try {
      results[key] = await measure(c, model);
      if (key === 'scaled' && CONFIG.feedEvents > 0) {
        log(`hecate scaled: feed replay of ${CONFIG.feedEvents} events`);
        feed = await feedReplay(c, promptOf(CONFIG.turns, 'feed'), CONFIG.feedEvents);
      }
    } finally {
      await c.close();
    }
  }
  return { results, feed };
}

async function main() {
  const t0 = performance.now();
  const model = await start('model server', [join(HERE, 'model-server.mjs')]);
  model.url = `http://127.0.0.1:${model.info.port}`;
  const notes = `${randomBytes(768)
    .toString('base64')
    .match(/.{1,76}/g)
    .join('\n')}\n`;
  const facts = await machineFacts();
  const { results, feed } = await contenders(model, notes);
  const report = {
    date: new Date().toISOString().slice(0, 10),
    machine: { ...facts, load_end: (await machineFacts()).load_start },
    config: CONFIG,
    results,
    feed,
  };
  report.seconds = (performance.now() - t0) / 1000;
  const { md, json } = render(report);
  console.log(md);
  const name = `durable-${report.date}${QUICK ? '-quick' : ''}${ONLY.length < 4 ? `-only-${ONLY.join('-')}` : ''}${argv.includes('--feed') ? '-feed' : ''}`;
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `${name}.md`), md);
  writeFileSync(join(ROOT, 'bench', 'results', `${name}.json`), JSON.stringify(json, null, 2));
  log(`wrote bench/results/${name}.{md,json}`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    stopChildren();
    for (const dir of temps) rmSync(dir, { recursive: true, force: true });
  });
