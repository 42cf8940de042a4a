// Load generation for the gateway benchmark: closed-loop request runners and stream runners on undici Pools.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const EMPTY = Buffer.alloc(0);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function stats(values) {
  const sorted = Float64Array.from(values).sort();
  const pick = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : NaN;
  return { n: sorted.length, p50: pick(50), p90: pick(90), p99: pick(99), max: sorted.length ? sorted[sorted.length - 1] : NaN, mean };
}

function pool(origin, connections) {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
}

/**
 * Closed loop: `concurrency` workers send back-to-back requests. Stops after `count` measured requests
 * (after `warmup`) or after `durationMs`. Latency is measured until the whole body is read.
 */
export async function closedLoop({ origin, path, headers, body, concurrency = 1, count, durationMs, warmup = 0, warmupMs = 0 }) {
  const p = pool(origin, concurrency);
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const opts = { method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: payload };
  const one = async () => {
    const t0 = performance.now();
    const res = await p.request(opts);
    await res.body.text();
    return { ms: performance.now() - t0, ok: res.statusCode === 200 };
  };
  // Warm up: connections, JIT, caches.
  const warmEnd = performance.now() + warmupMs;
  let warmLeft = warmup;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (warmLeft-- > 0 || performance.now() < warmEnd) await one();
    }),
  );
  const latencies = [];
  let errors = 0;
  let left = count ?? Infinity;
  const start = performance.now();
  const end = durationMs ? start + durationMs : Infinity;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0 && performance.now() < end) {
        const r = await one().catch(() => ({ ms: 0, ok: false }));
        if (r.ok) latencies.push(r.ms);
        else errors++;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  await p.close();
  return { ...stats(latencies), errors, elapsedMs, rps: (latencies.length / elapsedMs) * 1000 };
}

/**
 * Streams: `total` SSE requests, at most `concurrency` open at once. Measures time to first body chunk (TTFT),
 * total duration, and the largest gap between two chunks of one stream; checks each stream ended properly.
 * `staggerMs`: worker i opens its first stream after i × staggerMs / concurrency, so requests arrive spread
 * out (steady state) instead of `concurrency` connects in the same millisecond; workers stay staggered since
 * every stream lasts about as long.
 * `warmup`: that many streams run first on the same connections and are not counted (steady state: every
 * connection — the client's and, behind a proxy, the proxy's own to the upstream — already open and reused);
 * their timings are not counted; a warm-up stream that fails or ends without `endMarker` counts in `errors`.
 */
export async function streams({ origin, path, headers, body, concurrency, total, endMarker, staggerMs = 0, warmup = 0 }) {
  const p = pool(origin, concurrency);
  const payload = JSON.stringify(body);
  const opts = { method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: payload };
  const ttft = [];
  const durations = [];
  let maxGap = 0;
  let errors = 0;
  let incomplete = 0;
  let started = 0;
  const one = async (counted) => {
    const t0 = performance.now();
    const res = await p.request(opts);
    if (res.statusCode !== 200) {
      await res.body.text();
      errors++;
      return;
    }
    let first = true;
    let last = t0;
    let prev = EMPTY;
    let tail = EMPTY;
    // 'data' events, not an async iterator: no promise per chunk, so the load generator's own work per chunk
    // (32 streams × 50 chunks/s) stays small next to what it measures.
    await new Promise((resolve, reject) => {
      res.body.on('data', (chunk) => {
        const now = performance.now();
        if (first) {
          if (counted) ttft.push(now - t0);
          first = false;
        } else if (counted && now - last > maxGap) maxGap = now - last;
        last = now;
        prev = tail;
        tail = chunk;
      });
      res.body.once('end', resolve);
      res.body.once('error', reject);
    });
    const complete = Buffer.concat([prev, tail]).toString('utf8').includes(endMarker);
    if (!counted) {
      if (!complete) errors++;
      return;
    }
    durations.push(last - t0);
    if (!complete) incomplete++;
  };
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      if (staggerMs > 0) await sleep((i * staggerMs) / concurrency);
      while (started < warmup + total) {
        const counted = started++ >= warmup;
        await one(counted).catch(() => errors++);
      }
    }),
  );
  await p.close();
  return { ttft: stats(ttft), ttftSamples: ttft, duration: stats(durations), maxGapMs: maxGap, errors, incomplete, completed: durations.length - incomplete };
}

export function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
