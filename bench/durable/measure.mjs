// The measurements of bench/durable, the same for every contender. A contender is { label, run(prompt) → { ms },
// verify(result, tag, turns) → phases?, engineProcs: { name: pid }, databaseUrl } (bench/durable/run.mjs builds the
// plain and DBOS ones, hecate.mjs Hecate's).
import pg from 'pg';
import { sleep, stats } from '../lib/load.mjs';
import { backendDatabase, cpuDelta, cpuSnapshot, machineBusySeconds } from '../lib/proc-cpu.mjs';

/** The prompt of a run of `turns` model calls; `tag` ends up in the file it writes. */
export const promptOf = (turns, tag) => `Summarise notes.txt into out.txt. turns=${turns} tag=${tag}`;

/** What the model server has served so far (`GET /stats`). */
export async function modelServed(modelUrl) {
  return (await fetch(`${modelUrl}/stats`)).json();
}

/**
 * `count` runs one after another, each checked afterwards (its turns, its file): create → terminal ms, and the p50 of
 * each phase `verify` returns (Hecate: where the run's time went).
 */
export async function sequential(c, count, turns) {
  const ms = [];
  const phases = {};
  for (let i = 0; i < count; i++) {
    const tag = `${c.label.replace(/\W+/g, '-')}-seq-${i}-${Date.now()}`;
    const r = await c.run(promptOf(turns, tag));
    ms.push(r.ms);
    for (const [k, v] of Object.entries((await c.verify(r, tag, turns)) ?? {})) (phases[k] ??= []).push(v);
  }
  return { ...stats(ms), phases_p50: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, stats(v).p50])) };
}

/**
 * The process groups whose CPU a window counts: the engine's processes (and each apart when there are several),
 * every postgres and redis-server process, the model server; and, to tell what else the machine ran, the Postgres
 * backends serving other databases than the contender's.
 */
function cpuGroups(c, model) {
  const procs = Object.entries(c.engineProcs);
  const own = c.databaseUrl ? new URL(c.databaseUrl).pathname.slice(1) : undefined;
  const groups = { engine: procs.map(([, pid]) => pid), postgres: { names: ['postgres'] }, redis: { names: ['redis-server'] }, model: [model.pid] };
  if (procs.length > 1) for (const [name, pid] of procs) groups[`engine.${name}`] = [pid];
  const otherDatabase = (pid) => ![undefined, own].includes(backendDatabase(pid));
  return { groups, apart: { postgres_other_databases: { names: ['postgres'], where: otherDatabase } } };
}

/** CPU, model responses and time at one point of a window. */
async function reading(model, groups, apart) {
  return {
    served: await modelServed(model.url),
    cpu: cpuSnapshot(groups),
    apart: cpuSnapshot(apart),
    client: process.cpuUsage(),
    machine: machineBusySeconds(),
    t: performance.now(),
  };
}

/** A window's figures from its two readings; `turns` per run for the runs-ended cross-check. */
function windowFigures(a, b, runsEnded, turns) {
  const seconds = (b.t - a.t) / 1000;
  const modelTurns = b.served.responses - a.served.responses;
  const cpu = cpuDelta(a.cpu, b.cpu);
  cpu.client = (b.client.user - a.client.user + b.client.system - a.client.system) / 1e6;
  const ours = ['engine', 'postgres', 'redis', 'model', 'client'].reduce((sum, k) => sum + cpu[k], 0);
  const perTurnMs = Object.fromEntries(Object.entries(cpu).map(([k, s]) => [k, (s * 1000) / modelTurns]));
  return {
    seconds,
    model_turns: modelTurns,
    turns_per_s: modelTurns / seconds,
    runs_ended: runsEnded,
    run_turns_per_s: (runsEnded * turns) / seconds,
    cpu_seconds: cpu,
    cpu_ms_per_turn: perTurnMs,
    engine_side_cpu_ms_per_turn: perTurnMs.engine + perTurnMs.postgres + perTurnMs.redis,
    // Cores kept busy by everything else: processes outside the groups, and other databases' Postgres backends.
    other_work_cores: (b.machine - a.machine - ours + cpuDelta(a.apart, b.apart).postgres_other_databases) / seconds,
    tools_per_request: [b.served.tools_min, b.served.tools_max],
  };
}

/**
 * Closed loop: `inflight` runs of `turns` model calls kept in flight (each start as soon as one ends). Once as many
 * runs as are in flight have ended (steady state; at most `warmCapMs`), a window of `windowMs` is measured: model
 * turns the model server answered in it, runs that ended in it, and the CPU of the groups of `cpuGroups` and of this
 * process. Then the runs in flight drain.
 */
export async function closedLoop(c, model, { inflight, turns, windowMs, warmCapMs = 120_000 }) {
  const ended = [];
  let errors = 0;
  let stop = false;
  const worker = async (w) => {
    for (let i = 0; !stop; i++) {
      try {
        await c.run(promptOf(turns, `load-${w}-${i}`));
        ended.push(performance.now());
      } catch (err) {
        if (++errors <= 3) process.stderr.write(`${c.label}: ${String(err).slice(0, 400)}\n`);
        await sleep(100);
      }
    }
  };
  const workers = Array.from({ length: inflight }, (_, w) => worker(w));
  const warmUntil = performance.now() + warmCapMs;
  while (ended.length < inflight && performance.now() < warmUntil) await sleep(100);
  const { groups, apart } = cpuGroups(c, model);
  const a = await reading(model, groups, apart);
  await sleep(windowMs);
  const b = await reading(model, groups, apart);
  stop = true;
  await Promise.all(workers);
  return { inflight, errors, ...windowFigures(a, b, ended.filter((t) => t >= a.t && t < b.t).length, turns) };
}

/** Runs `count` runs of `turns` model calls, `inflight` at once. */
async function batch(c, turns, count, inflight) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < count) await c.run(promptOf(turns, `batch-${turns}-${next++}`));
    }),
  );
}

/**
 * Rows and bytes a database holds, per user table and in all: inserted/updated/deleted tuples (pg_stat_user_tables,
 * after this backend's pending stats are flushed and the snapshot cleared; other backends flush theirs within a
 * second of going idle) and total relation size (heap, TOAST, indexes; whole 8 KB pages).
 */
async function dbUsage(url) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('SELECT pg_stat_force_next_flush(), pg_stat_clear_snapshot()');
    const { rows } = await db.query(
      `SELECT schemaname || '.' || relname AS name, n_tup_ins::bigint AS ins, n_tup_upd::bigint AS upd, n_tup_del::bigint AS del,
              pg_total_relation_size(relid)::bigint AS bytes
         FROM pg_stat_user_tables`,
    );
    const tables = Object.fromEntries(rows.map((r) => [r.name, { ins: Number(r.ins), upd: Number(r.upd), del: Number(r.del), bytes: Number(r.bytes) }]));
    const total = { ins: 0, upd: 0, del: 0, bytes: 0 };
    for (const t of Object.values(tables)) for (const k of Object.keys(total)) total[k] += t[k];
    return { ...total, tables };
  } finally {
    await db.end();
  }
}

/** Per run, each table's rows written and bytes added between two readings (tables that changed only). */
function perTable(before, after, runs) {
  const out = {};
  for (const [name, t] of Object.entries(after.tables)) {
    const b = before.tables[name] ?? { ins: 0, upd: 0, del: 0, bytes: 0 };
    const d = { ins: (t.ins - b.ins) / runs, upd: (t.upd - b.upd) / runs, del: (t.del - b.del) / runs, bytes: (t.bytes - b.bytes) / runs };
    if (d.ins || d.upd || d.del || d.bytes) out[name] = d;
  }
  return out;
}

/**
 * A backend flushes its table counts when it goes idle, at most once a second; counts left pending then wait for its
 * idle timer (PGSTAT_IDLE_INTERVAL, 10 s). This long after the last run ended, every count is in.
 */
export const STATS_FLUSH_MS = 11_000;
const rowsOf = (u) => u.ins + u.upd + u.del;

/**
 * Writes per run, by run length: for each of `turnCounts`, a batch of `runs` runs (`inflight` at once) between two
 * readings of `dbUsage`. Bytes are read a second after the batch; rows only where `countRows(turns)`, after
 * STATS_FLUSH_MS. First, the rows written while idle for STATS_FLUSH_MS (leases, heartbeats, pollers: what a batch's
 * figures include besides its runs).
 */
export async function writesPerRun(c, { turnCounts, runs, inflight, countRows }) {
  await sleep(STATS_FLUSH_MS);
  const quiet = await dbUsage(c.databaseUrl);
  await sleep(STATS_FLUSH_MS);
  let before = await dbUsage(c.databaseUrl);
  const idle = { seconds: STATS_FLUSH_MS / 1000, rows: rowsOf(before) - rowsOf(quiet) };
  const out = [];
  for (const turns of turnCounts) {
    const t0 = performance.now();
    await batch(c, turns, runs, inflight);
    const seconds = (performance.now() - t0) / 1000;
    const rows = countRows(turns);
    await sleep(rows ? STATS_FLUSH_MS : 1000);
    const after = await dbUsage(c.databaseUrl);
    const per = (k) => (rows || k === 'bytes' ? (after[k] - before[k]) / runs : null);
    out.push({
      turns,
      runs,
      seconds,
      inserted: per('ins'),
      updated: per('upd'),
      deleted: per('del'),
      bytes: per('bytes'),
      tables: perTable(before, after, runs),
    });
    before = after;
  }
  return { idle, batches: out };
}
