// The scaled deployment the scale bench drives: a scratch database, a Redis prefix, api and worker processes (each
// replaceable: start the new one, wait healthy, SIGTERM the old one, wait for it to exit), and per-process samples of
// RSS broken down (V8 heap spaces, external memory, malloc arenas, file-backed pages) and event-loop delay.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis from 'ioredis';
import pg from 'pg';
import { scratchDatabase } from '../lib/database.mjs';
import { rssMb, sleep } from '../lib/load.mjs';
import { procMemory } from '../lib/memory.mjs';
import { startHecate } from '../lib/processes.mjs';
import { AUTH, TOKEN } from './http.mjs';

const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SHUTDOWN_GRACE_MS = 25_000;
/** prom-client samples the event loop with a 10 ms timer; its histogram holds the whole interval, lag is the rest. */
const ELD_RESOLUTION_S = 0.01;

export class Deployment {
  procs = [];
  history = [];
  counters = { api: 0, worker: 0 };

  constructor({ label, upstreamUrl, leaseSeconds, router, t0 }) {
    this.label = label;
    this.upstreamUrl = upstreamUrl;
    this.leaseSeconds = leaseSeconds;
    this.router = router;
    this.t0 = t0;
  }

  at() {
    return +((Date.now() - this.t0) / 1000).toFixed(1);
  }

  async open() {
    this.db = await scratchDatabase(`hecate_bench_scale_${this.label}`);
    this.logDir = mkdtempSync(join(tmpdir(), `hecate-bench-scale-${this.label}-`));
    this.env = {
      DATABASE_URL: this.db.url,
      REDIS_URL: REDIS,
      GATEWAY_REDIS_PREFIX: `bs${this.label[0]}${process.pid}`,
      GATEWAY_AUTH_TOKEN: TOKEN,
      GATEWAY_MIGRATE_ON_BOOT: 'true',
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_SANDBOX: 'none',
      GATEWAY_TASK_QUEUE_WORKERS: '16',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(this.leaseSeconds),
      GATEWAY_SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
      GATEWAY_RATE_LIMIT_ENABLED: 'false',
      PROVIDER_FAKE_BASE_URL: `${this.upstreamUrl}/v1`,
      PROVIDER_FAKE_KIND: 'local',
      // One directory for every worker: the shared volume the README asks for, so a resumed run finds its workspace.
      GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), `hecate-bench-scale-ws-`)),
    };
    this.pg = new pg.Client({ connectionString: this.db.url });
  }

  /** Starts one api or worker; an api joins the rotation once healthy and leaves it when it exits. */
  async start(role) {
    const label = `${role}-${++this.counters[role]}`;
    const t = Date.now();
    const proc =
      role === 'api'
        ? await startHecate(label, 'main.api.js', this.env)
        : await startHecate(label, 'main.worker.js', this.env, { portVar: 'WORKER_HEALTH_PORT' });
    Object.assign(proc, { role, state: 'up', startedAt: Date.now(), samples: [] });
    this.procs.push(proc);
    proc.once('exit', (code, signal) => {
      proc.state = 'exited';
      proc.exit = { code, signal, at_s: this.at() };
      this.router.remove(proc);
    });
    if (role === 'api') this.router.add(proc);
    if (this.procs.length === 1) await this.pg.connect();
    return { proc, healthyMs: Date.now() - t };
  }

  live() {
    return this.procs.filter((p) => p.state !== 'exited');
  }

  /**
   * A rolling restart step as Kubernetes does it with maxSurge 1: start the replacement, wait until healthy, SIGTERM
   * the old process. The old api stays in rotation for `lbLagMs` (endpoint propagation), then leaves it; the step ends
   * when the old process has exited (SIGKILL after grace + 15 s, reported) and `settleMs` has passed. `beforeSigterm(old)`
   * runs between the replacement being healthy and the SIGTERM.
   */
  async replace(old, { lbLagMs, settleMs, log, beforeSigterm }) {
    const step = { replaced: old.label, role: old.role, at_s: this.at() };
    const { proc, healthyMs } = await this.start(old.role);
    step.replacement = proc.label;
    step.replacement_healthy_ms = healthyMs;
    await beforeSigterm?.(old);
    const exited = new Promise((resolve) => (old.exitCode !== null ? resolve() : old.once('exit', resolve)));
    if (old.role === 'api') {
      step.in_flight = { requests: old.inflight ?? 0, feed_streams: old.feeds ?? 0 };
      step.in_flight_requests = Object.fromEntries(Object.entries(old.inflightKinds ?? {}).filter(([, n]) => n > 0));
    } else {
      step.held = await this.heldBy(old);
      step.in_flight = { runs: step.held.runs.length, turns: step.held.turns.length };
    }
    const sigterm = Date.now();
    step.sigterm_epoch_ms = sigterm;
    step.sigterm_at_s = this.at();
    old.state = 'draining';
    old.kill('SIGTERM');
    log(`  ${step.sigterm_at_s}s SIGTERM ${old.label} (replacement ${proc.label} healthy in ${healthyMs} ms)`);
    const lag = sleep(lbLagMs).then(() => this.router.remove(old));
    const limit = SHUTDOWN_GRACE_MS + 15_000;
    const timedOut = await Promise.race([exited.then(() => false), sleep(limit).then(() => true)]);
    if (timedOut) {
      old.kill('SIGKILL');
      await exited;
    }
    await lag;
    step.shutdown_ms = Date.now() - sigterm;
    step.exit_code = old.exit?.code ?? null;
    step.exit_signal = old.exit?.signal ?? null;
    step.killed_after_timeout = timedOut;
    log(`  ${this.at()}s ${old.label} exited (${step.exit_code ?? step.exit_signal}) after ${step.shutdown_ms} ms`);
    await sleep(settleMs);
    this.history.push(step);
    return step;
  }

  /** The runs and turns a worker holds the lease of (the lease owner names the process id). */
  async heldBy(worker) {
    const q = (table) => `SELECT id FROM ${table} WHERE status = 'running' AND lease_owner LIKE $1`;
    const like = `%:${worker.pid}:%`;
    const [runs, turns] = await Promise.all([this.pg.query(q('task_runs'), [like]), this.pg.query(q('agent_chat_turns'), [like])]);
    return { runs: runs.rows.map((r) => r.id), turns: turns.rows.map((r) => r.id) };
  }

  /**
   * RSS (from /proc/<pid>/status) and its breakdown (bench/lib/memory.mjs; V8's heap spaces, heap total, external
   * memory from prom-client's default metrics), and the event-loop delay since the previous sample (prom-client,
   * reset per scrape).
   */
  async sample(phaseStart) {
    await Promise.all(
      this.live().map(async (p) => {
        const s = { t_s: +((Date.now() - phaseStart) / 1000).toFixed(1), rss_mb: +rssMb(p.pid).toFixed(1), ...procMemory(p.pid) };
        try {
          const res = await fetch(`${p.url}/metrics`, { headers: AUTH, signal: AbortSignal.timeout(10_000) });
          const text = await res.text();
          const g = (name) => {
            const m = new RegExp(`^hecate_${name} ([0-9.e+-]+)$`, 'm').exec(text);
            return m ? Number(m[1]) : NaN;
          };
          const lag = (name) => +Math.max(0, (g(name) - ELD_RESOLUTION_S) * 1000).toFixed(2);
          const mb = (bytes) => +(bytes / 2 ** 20).toFixed(1);
          /** `hecate_nodejs_heap_space_size_<kind>_bytes{space="new"}` etc., by space. */
          const spaces = (kind) =>
            Object.fromEntries(
              [...text.matchAll(new RegExp(`^hecate_nodejs_heap_space_size_${kind}_bytes\\{space="([a-z_]+)"\\} ([0-9.e+-]+)$`, 'gm'))].map((m) => [
                m[1],
                mb(Number(m[2])),
              ]),
            );
          Object.assign(s, {
            eventloop_lag_p50_ms: lag('nodejs_eventloop_lag_p50_seconds'),
            eventloop_lag_p99_ms: lag('nodejs_eventloop_lag_p99_seconds'),
            eventloop_lag_max_ms: lag('nodejs_eventloop_lag_max_seconds'),
            heap_used_mb: mb(g('nodejs_heap_size_used_bytes')),
            heap_total_mb: mb(g('nodejs_heap_size_total_bytes')),
            external_mb: mb(g('nodejs_external_memory_bytes')),
            open_fds: g('process_open_fds'),
            heap_space_total_mb: spaces('total'),
            heap_space_used_mb: spaces('used'),
          });
        } catch (err) {
          s.metrics_error = String(err?.message ?? err);
        }
        p.samples.push(s);
      }),
    );
  }

  /** Warn-or-worse log lines of every process (pino JSON, level ≥ 40), counted by message, with a few samples. */
  logSummary() {
    const byMsg = {};
    for (const p of this.procs) {
      const text = p.output();
      writeFileSync(join(this.logDir, `${p.label}.log`), text);
      for (const line of text.split('\n')) {
        if (!line.startsWith('{')) continue;
        let rec;
        try {
          rec = JSON.parse(line);
        } catch {
          continue;
        }
        if ((rec.level ?? 0) < 40) continue;
        const key = `${rec.level >= 50 ? 'error' : 'warn'}: ${rec.msg}`;
        byMsg[key] ??= { count: 0, processes: new Set(), sample: undefined };
        byMsg[key].count += 1;
        byMsg[key].processes.add(p.label);
        byMsg[key].sample ??= line.slice(0, 600);
      }
    }
    return Object.entries(byMsg)
      .sort((a, b) => b[1].count - a[1].count)
      .map(([msg, v]) => ({ msg, count: v.count, processes: [...v.processes].join(','), sample: v.sample }));
  }

  /** Kills what is left, drops the database and deletes the Redis prefix's keys (queues, live streams). */
  async close() {
    for (const p of this.live()) p.kill('SIGKILL');
    await sleep(300);
    await this.pg.end().catch(() => undefined);
    await this.db.drop();
    const redis = new IORedis(REDIS, { lazyConnect: true });
    try {
      await redis.connect();
      for await (const keys of redis.scanStream({ match: `${this.env.GATEWAY_REDIS_PREFIX}:*`, count: 1000 })) if (keys.length) await redis.unlink(...keys);
    } finally {
      redis.disconnect();
    }
  }
}
