// The report of bench/durable: machine facts, the contenders' figures, the targets (ratios in the same run) and the
// method, as Markdown; the JSON is the report object with the targets added.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { BENCH_DATABASE } from '../lib/database.mjs';
import { ROOT } from '../lib/processes.mjs';

const sh = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};

/** CPU, cores, memory, Node, Postgres and Redis versions, the commit, the load average now. */
export async function machineFacts() {
  const db = new pg.Client({ connectionString: BENCH_DATABASE });
  await db.connect();
  const postgres = (await db.query('SHOW server_version')).rows[0].server_version;
  await db.end();
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres,
    redis: /v=(\S+)/.exec(sh('redis-server', ['--version']))?.[1] ?? 'unknown',
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    load_start: loadavg().map((l) => +l.toFixed(2)),
  };
}

const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? 'n/a' : x.toFixed(d));
const at = (r, inflight) => r?.closed_loop.find((c) => c.inflight === inflight);

/** Each target: the figure, the DBOS figure, their ratio and whether it is met. */
function targets(results) {
  const dbos = results.dbos;
  const out = [];
  const add = (name, mine, theirs, cmp, limit) => {
    const ratio = mine / theirs;
    out.push({
      target: `${name} ${cmp} ${limit}`,
      hecate: mine,
      dbos: theirs,
      ratio,
      met: Number.isFinite(ratio) && (cmp === '≥' ? ratio >= limit : ratio <= limit),
    });
  };
  for (const [key, label, floor] of [
    ['scaled', 'hecate scaled', 1.0],
    ['embedded', 'hecate embedded', 0.6],
  ]) {
    const h = results[key];
    if (!h || !dbos) continue;
    for (const n of [50, 200]) add(`${label} turns/s at ${n} in flight ÷ dbos`, at(h, n).turns_per_s, at(dbos, n).turns_per_s, '≥', floor);
    for (const n of [50, 200])
      add(
        `${label} engine-side CPU per turn at ${n} in flight ÷ dbos`,
        at(h, n).engine_side_cpu_ms_per_turn,
        at(dbos, n).engine_side_cpu_ms_per_turn,
        '≤',
        1.5,
      );
    add(`${label} end to end at c=1 (p50) ÷ dbos`, h.end_to_end_ms.p50, dbos.end_to_end_ms.p50, '≤', 1.5);
  }
  return out;
}

/** Per engine, what it adds to each model turn over the plain loop: time at c=1, CPU at 50 and 200 in flight. */
function overPlain(results, turns) {
  const plain = results.plain;
  if (!plain) return [];
  return Object.values(results)
    .filter((r) => r !== plain)
    .map((r) => ({
      label: r.label,
      latency_ms_per_turn: (r.end_to_end_ms.p50 - plain.end_to_end_ms.p50) / turns,
      cpu_ms_per_turn: Object.fromEntries([50, 200].map((n) => [n, at(r, n).engine_side_cpu_ms_per_turn - at(plain, n).engine_side_cpu_ms_per_turn])),
      throughput_share_of_plain: Object.fromEntries([50, 200].map((n) => [n, at(r, n).turns_per_s / at(plain, n).turns_per_s])),
    }));
}

function mainTable(results) {
  const rows = Object.values(results).map((r) => {
    const [a, b] = [at(r, 50), at(r, 200)];
    const w = r.writes?.batches[0];
    const split = (c) => `${f(c.cpu_ms_per_turn.engine, 2)} / ${f(c.cpu_ms_per_turn.postgres, 2)} / ${f(c.cpu_ms_per_turn.redis, 2)}`;
    return `| ${r.label} | ${f(r.end_to_end_ms.p50)} / ${f(r.end_to_end_ms.p90)} | ${f(a.turns_per_s)} | ${f(b.turns_per_s)} | ${f(a.engine_side_cpu_ms_per_turn, 2)} / ${f(b.engine_side_cpu_ms_per_turn, 2)} | ${split(a)} | ${split(b)} | ${w ? f(w.inserted + w.updated + w.deleted) : 'n/a'} | ${w ? `${f(w.inserted)} / ${f(w.updated)} / ${f(w.deleted)}` : 'n/a'} | ${w ? Math.round(w.bytes) : 'n/a'} | ${a.errors + b.errors} | ${f(a.other_work_cores, 2)} / ${f(b.other_work_cores, 2)} |`;
  });
  return [
    '| contender | one run end to end at c=1, ms p50 / p90 | turns/s, 50 in flight | turns/s, 200 in flight | engine-side CPU ms per turn, 50 / 200 in flight | of which engine / postgres / redis, 50 | … 200 | rows written per run | inserted / updated / deleted | bytes stored per run | failed runs | other work on the machine, cores busy, 50 / 200 |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

function storageTable(results) {
  const engines = Object.values(results).filter((r) => r.writes);
  if (!engines.length) return [];
  const turns = engines[0].writes.batches.map((b) => b.turns);
  const rows = (b) => (b.inserted === null ? null : (b.inserted + b.updated + b.deleted) / b.turns);
  const cell = (b) => `${Math.round(b.bytes)} / **${Math.round(b.bytes / b.turns)}** / ${f(rows(b), 1)}`;
  return [
    `Storage by run length (bytes stored per run / **bytes per turn** / rows written per turn; ${engines[0].writes.batches[0].runs} runs per length):`,
    '',
    `| contender | ${turns.map((t) => `${t} turns`).join(' | ')} | idle rows written in ${engines[0].writes.idle.seconds} s |`,
    `|---|${turns.map(() => '---').join('|')}|---|`,
    ...engines.map((r) => `| ${r.label} | ${r.writes.batches.map(cell).join(' | ')} | ${r.writes.idle.rows} |`),
  ];
}

/** Hecate's phases at c=1 (p50 of each) and, where a contender has several processes, each one's CPU per turn. */
function whereTimeGoes(results) {
  const lines = [];
  for (const r of Object.values(results)) {
    const phases = Object.entries(r.end_to_end_ms.phases_p50 ?? {});
    if (phases.length)
      lines.push(`- ${r.label}, one run at c=1 (p50 of each phase, ms): ${phases.map(([k, v]) => `${k.replaceAll('_', ' ')} ${f(v)}`).join(', ')}.`);
    const split = r.closed_loop.map((w) => Object.entries(w.cpu_ms_per_turn).filter(([k]) => k.startsWith('engine.')));
    if (split[0].length)
      lines.push(
        `- ${r.label}, CPU ms per turn by process at ${r.closed_loop.map((w) => w.inflight).join(' / ')} in flight: ${split[0].map(([k], i) => `${k.slice(7)} ${split.map((s) => f(s[i][1], 2)).join(' / ')}`).join(', ')}.`,
      );
  }
  return lines.length ? ['Where the time goes:', '', ...lines] : [];
}

function feedLines(feed) {
  if (!feed) return ['Feed replay: not run.'];
  return [
    `Feed replay (hecate scaled): ${feed.events} external events posted to one run, 16 at once, in ${f(feed.post_seconds)} s (${f(feed.posts_per_s, 0)}/s); a fresh \`GET /hecate/v1/events/stream\` with \`Last-Event-ID: 0\` read ${feed.frames} events (the whole feed) in ${f(feed.seconds, 2)} s = **${f(feed.events_per_s, 0)} events/s**; ended: ${feed.how}; all ${feed.events} there once and in order (ids strictly increasing): **${feed.all_arrived_in_order ? 'yes' : 'no'}** (seen ${feed.posted_seen}, duplicates ${feed.duplicates}, out of order ${feed.out_of_order}); slow-consumer disconnects during the read: **${feed.slow_consumer_disconnects}**.`,
  ];
}

const METHOD = (c) => [
  '## Method',
  '',
  `One run = ${c.turns} model calls against a scripted model server in its own process (OpenAI chat completions, streamed, answering at once): a \`read_file\` of notes.txt (~1 KB of random base64), a \`file_write\` of out.txt, a final answer; every request carries Hecate's 11 built-in tool schemas (the model server counts them: tools per request is in the JSON). Longer runs (storage) add \`read_file\` calls. Contenders, each in its own process(es), on the same Postgres: **plain** (the loop as plain calls, no durability), **dbos** (DBOS Transact, one workflow per run started with \`DBOS.startWorkflow\` and awaited with \`getResult()\`, each model and tool call a \`DBOS.runStep\`; default pool of 10), **hecate scaled** (api + one worker, Postgres + Redis; default pool of 10; \`GATEWAY_TASK_QUEUE_WORKERS\` = 200) and **hecate embedded** (one process, PGlite). Hecate runs are created with \`POST /hecate/v1/tasks\` + \`/start\` in the default workspace mode (the directory copied per run) and their ends read from the public feed's terminal events; plain and dbos get runs over Node's IPC channel and run with the Hecate worker's launch flags.`,
  '',
  `- **End to end at c=1**: create → terminal as this client sees it, ${c.sequential} sequential runs after ${c.warmup} warm-up; each run checked afterwards (its model calls, the file its file_write wrote).`,
  `- **Turns/s**: a closed loop keeps N runs in flight; once N runs have ended, a window of ${c.windowMs / 1000} s; turns = responses the model server sent in it (runs ended × ${c.turns} in the JSON as a cross-check). The runs in flight then drain before the next step.`,
  "- **CPU per turn, engine side**: user + system CPU (with reaped children) over the window of the contender's processes + every `postgres` and `redis-server` process on the machine, ÷ turns; nothing subtracted (the plain row shows what Postgres and Redis use meanwhile without being asked anything). The model server's and the load generator's CPU are in the JSON. \"Other work on the machine\" is the cores kept busy meanwhile by everything else (/proc/stat busy time minus the groups above, plus Postgres backends of other databases): well above 0, another job shared the machine and that contender's figures are lower for it.",
  `- **Rows and bytes per run**: \`pg_stat_user_tables\` n_tup_ins/upd/del and the total relation size (heap, TOAST, indexes, in whole 8 KB pages) of the contender's database's user tables, ÷ runs; batches of ${c.storageRuns} runs, ${c.storageInflight} at once, of ${c.storageTurns.join(', ')} model calls. Sizes are read 1 s after a batch; row counts${c.quick ? ' of the 3-call batch only (n/a for the others in --quick)' : ''} 11 s after it, once every backend has flushed its counts (a backend that flushed less than 1 s before going idle holds the rest for 10 s). The idle column is what the database had written meanwhile with no run going (11 s). PGlite's statistics are not read (n/a).`,
  '- **Targets** are ratios to DBOS in the same run; "over plain" is what each engine adds per model turn to the plain loop.',
];

/** A table's lines and a blank line after, or nothing when it has no rows (a run without plain or dbos). */
const table = (head, rows) => (rows.length ? [head, head.replace(/[^|]+/g, '---'), ...rows, ''] : []);

/** The Markdown report and the JSON (the report with targets and the over-plain figures). */
export function render(report) {
  const { machine: m, config: c, results } = report;
  const tgt = targets(results);
  const plain = overPlain(results, c.turns);
  const modelCpu = Object.values(results).flatMap((r) => r.closed_loop.map((w) => w.cpu_ms_per_turn.model));
  const md = [
    `# durable bench ${report.date}${c.quick ? ' (--quick)' : ''}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GiB, Node ${m.node}, PostgreSQL ${m.postgres}, Redis ${m.redis}; commit ${m.commit}; DBOS Transact 5.3.0. Load average ${m.load_start.join(' / ')} at the start, ${m.load_end.join(' / ')} at the end; ${Math.round(report.seconds)} s in all.`,
    '',
    ...mainTable(results),
    '',
    `Model server CPU per turn (the same work for every contender): ${modelCpu.map((x) => f(x, 2)).join(', ')} ms in the windows above.`,
    '',
    ...whereTimeGoes(results),
    '',
    ...storageTable(results),
    '',
    ...table(
      '| over the plain loop, per model turn | time at c=1 (p50) ms | engine-side CPU ms, 50 / 200 in flight | turns/s as a share of plain, 50 / 200 |',
      plain.map(
        (p) =>
          `| ${p.label} | +${f(p.latency_ms_per_turn, 2)} | +${f(p.cpu_ms_per_turn[50], 2)} / +${f(p.cpu_ms_per_turn[200], 2)} | ${f(p.throughput_share_of_plain[50] * 100)} % / ${f(p.throughput_share_of_plain[200] * 100)} % |`,
      ),
    ),
    ...table(
      '| target | hecate | dbos | ratio | |',
      tgt.map((t) => `| ${t.target} | ${f(t.hecate, 2)} | ${f(t.dbos, 2)} | **${f(t.ratio, 2)}** | ${t.met ? 'met' : 'missed'} |`),
    ),
    ...feedLines(report.feed),
    '',
    ...METHOD(c),
    '',
  ].join('\n');
  return { md, json: { ...report, targets: tgt, over_plain: plain } };
}
