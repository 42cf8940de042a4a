import { ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { copyMigratedEmbedded } from './database';
import { freePort, waitFor } from './infra';

export { freePort };

const ROOT = resolve(__dirname, '../..');

export type ServerRole = 'all' | 'api' | 'worker' | 'migrate';

// HECATE_DIST lets parallel work build into its own folder (default: dist/, what `npm test` builds).
const DIST = process.env.HECATE_DIST ?? 'dist';
const ENTRY: Record<ServerRole, string> = {
  all: `${DIST}/src/main.js`,
  api: `${DIST}/src/main.api.js`,
  worker: `${DIST}/src/main.worker.js`,
  migrate: `${DIST}/src/main.migrate.js`,
};

/** V8's code cache of the built server, shared by every process the suites start (kept with the install's caches). */
const COMPILE_CACHE = resolve(ROOT, 'node_modules', '.cache', 'hecate-node-compile');

/** The absolute path of a built entrypoint (e.g. `main.mcp.js`), in the folder the server processes start from. */
export const builtEntry = (file: string): string => resolve(ROOT, DIST, 'src', file);

export interface ServerProcess {
  role: ServerRole;
  /** Base URL of the HTTP port (api/all) or of the worker's side port. */
  url: string;
  port: number;
  proc: ChildProcess;
  /** Everything the process printed on stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code (or signal name). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Data dirs made by embeddedEnv() that the first server start fills with the migrated PGlite template. */
const seedOnStart = new Set<string>();

/**
 * An embedded-mode environment: a fresh GATEWAY_DATA_DIR, no DATABASE_URL/REDIS_URL. The first server started on it
 * finds it holding a copy of the run's migrated PGlite template (test/support/database.ts), so its own migration
 * step has nothing to apply; `{ empty: true }` leaves it empty for the tests of migrating a new database.
 */
export function embeddedEnv({ empty = false }: { empty?: boolean } = {}): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hecate-e2e-'));
  if (!empty) seedOnFirstStart(dataDir);
  return { GATEWAY_DATA_DIR: dataDir };
}

/** Marks a suite's own GATEWAY_DATA_DIR (empty, or not yet made) to hold the migrated template when a server first starts on it. */
export function seedOnFirstStart(dataDir: string): string {
  seedOnStart.add(dataDir);
  return dataDir;
}

/** Copies the migrated template into an embedded server's data dir on its first start; true when it did. */
async function seedDataDir(role: ServerRole, env: Record<string, string | undefined>): Promise<boolean> {
  const dataDir = env.GATEWAY_DATA_DIR;
  if (role === 'migrate' || env.DATABASE_URL || !dataDir || !seedOnStart.delete(dataDir)) return false;
  mkdirSync(dataDir, { recursive: true });
  if (readdirSync(dataDir).length > 0) return false; // a directory the suite filled itself: leave it as it is
  await copyMigratedEmbedded(dataDir);
  return true;
}

/**
 * The environment of a process the suite starts from the built server: this one's, without the suite's own service
 * URLs and server configuration (TEST_*, DATABASE_URL, REDIS_URL, GATEWAY_*, PROVIDER_*, WORKER_*, PORT, HOST), then
 * `env` (an undefined value removes a variable).
 */
export function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const fullEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('TEST_') && !/^(DATABASE_URL|REDIS_URL|GATEWAY_|PROVIDER_|WORKER_|PORT|HOST)/.test(k)) fullEnv[k] = v;
  }
  // Every server of a run shares V8's code cache of dist/ (the server writes it once ready, src/bootstrap.ts): a start
  // after the first compiles far less of its ~2 s of module loading.
  Object.assign(fullEnv, { LOG_LEVEL: 'info', NODE_ENV: 'test', NODE_COMPILE_CACHE: COMPILE_CACHE });
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete fullEnv[k];
    else fullEnv[k] = v;
  }
  return fullEnv;
}

/** What the embedded server logs when its migration step applied something (nothing, on a template copy). */
const MIGRATED_LOG = 'embedded database migrated';

/** Starts `node dist/src/main.<role>.js` (build first: `npm test` does) and waits until /healthz answers. */
export async function startServer(
  role: ServerRole,
  env: Record<string, string | undefined>,
  {
    waitHealthy = true,
    timeoutMs = 90_000,
    hide = [],
    port: fixedPort,
    terminal = false,
  }: {
    waitHealthy?: boolean;
    timeoutMs?: number;
    /** Directories this process must not see (bubblewrap puts an empty tmpfs over each): e.g. workspaces an api never opens. */
    hide?: string[];
    /** Listen here (a restart at the same URL). */
    port?: number;
    /** Run it on a terminal (a pseudo-terminal from util-linux `script`), as a person running `npm start` does. */
    terminal?: boolean;
  } = {},
): Promise<ServerProcess> {
  const started = Date.now();
  const port = fixedPort ?? (await freePort());
  const seeded = await seedDataDir(role, env);
  const fullEnv = childEnv(role === 'worker' ? { WORKER_HEALTH_PORT: String(port), ...env } : { PORT: String(port), ...env });
  // Hidden directories: the process runs under bwrap (its own process group, so a signal reaches node, not only bwrap).
  const wrapped = hide.length > 0;
  // On a terminal: `script` gives node a pseudo-terminal and copies what it prints to our pipe; a signal to script's
  // group ends script, and node with it (SIGHUP when the terminal goes).
  const proc = wrapped
    ? spawn('bwrap', ['--dev-bind', '/', '/', ...hide.flatMap((d) => ['--tmpfs', d]), '--', process.execPath, ENTRY[role]], {
        cwd: ROOT,
        env: fullEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
    : terminal
      ? spawn('script', ['-qefc', `exec ${process.execPath} ${ENTRY[role]}`, '/dev/null'], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [ENTRY[role]], { cwd: ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const kill = (sig: NodeJS.Signals): void => {
    if (!wrapped || proc.pid === undefined) proc.kill(sig);
    else
      try {
        process.kill(-proc.pid, sig);
      } catch {
        // already gone
      }
  };
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => proc.once('exit', (code, signal) => res({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    role,
    url,
    port,
    proc,
    output: () => out,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM', stopTimeoutMs = 30_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode ?? proc.signalCode;
      kill(signal);
      const timer = setTimeout(() => kill('SIGKILL'), stopTimeoutMs);
      const { code, signal: sig } = await exited;
      clearTimeout(timer);
      return code ?? sig;
    },
  };
  if (role === 'migrate' || !waitHealthy) return server;
  const state = await waitFor(
    async () => {
      if (proc.exitCode !== null) return 'exited';
      return (await fetch(`${url}/healthz`)).ok ? 'healthy' : undefined; // a refused connection: not listening yet
    },
    { timeoutMs, intervalMs: 50, what: `${role} on ${url} to answer /healthz` },
  ).catch(() => {
    kill('SIGKILL');
    throw new Error(`${role} not healthy within ${timeoutMs} ms:\n${out}`);
  });
  if (state === 'exited') throw new Error(`${role} exited with ${proc.exitCode} before becoming healthy:\n${out}`);
  if (seeded && out.includes(MIGRATED_LOG)) throw new Error(`the migrated PGlite template was incomplete: the server migrated it:\n${out}`);
  logBoot(role, env, Date.now() - started);
  return server;
}

/**
 * With HECATE_TEST_BOOT_LOG=<file>, one JSON line a healthy server start (suite, role, storage, milliseconds): what a
 * run spends on starting servers, the larger part of the e2e suites' time (docs/design.md §9).
 */
function logBoot(role: ServerRole, env: Record<string, string | undefined>, ms: number): void {
  const file = process.env.HECATE_TEST_BOOT_LOG;
  if (!file) return;
  const suite = typeof expect === 'function' ? relative(ROOT, expect.getState().testPath ?? '') : '';
  appendFileSync(file, `${JSON.stringify({ suite, role, storage: env.DATABASE_URL ? 'postgres' : 'pglite', ms })}\n`);
}

/** Runs the migrate entrypoint to completion. */
export async function runMigrate(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const server = await startServer('migrate', env);
  const { code } = await server.exited;
  return { code, output: server.output() };
}
