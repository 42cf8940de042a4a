// Child processes for the benchmarks: fake upstreams, proxies and Hecate servers, each in its own process.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './load.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The build the benchmarks run (`npm run bench` builds dist/; HECATE_DIST points at another). */
export const DIST = process.env.HECATE_DIST ?? 'dist';

/** Every process started here; killed when the benchmark exits, however it exits. */
export const children = new Set();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

export const stopChildren = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};

/**
 * Starts `node <args>` in the repository root. With `waitLine`, resolves once the process printed its first
 * stdout line, parsed as JSON into `proc.info` (fake upstreams and proxies announce their port that way).
 */
export function start(label, args, env = {}, { waitLine = true } = {}) {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  proc.label = label;
  proc.output = () => out;
  if (!waitLine) return Promise.resolve(proc);
  return new Promise((res, rej) => {
    const onData = () => {
      if (!out.includes('\n')) return;
      proc.stdout.off('data', onData);
      const line = out.split('\n')[0];
      try {
        res(Object.assign(proc, { info: JSON.parse(line) }));
      } catch {
        rej(new Error(`${label}: unexpected first line: ${line}`));
      }
    };
    proc.stdout.on('data', onData);
    proc.once('exit', (code) => rej(new Error(`${label} exited (${code}):\n${out}`)));
  });
}

export function freePort() {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Polls `GET {url}/healthz` until it answers 200; throws if the process exits or time runs out. */
export async function waitHealthy(proc, url, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${proc.label} exited:\n${proc.output()}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await sleep(50);
  }
  throw new Error(`${proc.label} did not become healthy:\n${proc.output()}`);
}

/**
 * How every Hecate process is launched everywhere (package.json start scripts, Dockerfile, Helm chart, compose): a
 * young generation of a fixed size (two 32 MB semi-spaces), committed from the start instead of grown and shrunk by
 * V8 under load; an old generation whose next full collection comes at a fixed 1.3 × what the last one kept, and
 * capped for the role's memory limit in the Helm chart (api 256 MB of 512 Mi, worker 512 MB of 2 Gi, which its task
 * processes share) rather than derived from the machine's memory.
 */
const HEAP_SIZING = ['--min-semi-space-size=32', '--max-semi-space-size=32', '--heap-growing-percent=30'];
export const NODE_FLAGS = {
  'main.js': HEAP_SIZING,
  'main.api.js': [...HEAP_SIZING, '--max-old-space-size=256'],
  'main.worker.js': [...HEAP_SIZING, '--max-old-space-size=512'],
};
/** glibc: two malloc arenas however many cores the host has (the Dockerfile sets it for every role). */
export const NODE_ENV_VARS = { MALLOC_ARENA_MAX: '2' };

/**
 * A Hecate process from the build: `entry` is main.js (embedded: api + worker), main.api.js or main.worker.js.
 * `portVar` names the variable its HTTP port goes in (PORT; WORKER_HEALTH_PORT for a worker).
 */
export async function startHecate(label, entry, env, { portVar = 'PORT' } = {}) {
  const port = await freePort();
  const proc = await start(
    label,
    [...(NODE_FLAGS[entry] ?? []), join(DIST, 'src', entry)],
    { LOG_LEVEL: 'warn', ...NODE_ENV_VARS, ...env, [portVar]: String(port) },
    { waitLine: false },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(proc, url);
  return Object.assign(proc, { url });
}

/** CPU time (user + system) a process has used, in ms. */
export const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
