import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import type { AppConfigValues } from '@core/config/config.loader';
import { hecateAt } from './cli-common';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `hecate doctor`: what was checked, what was found, and (warn, fail) what to do about it. */
export interface CheckResult {
  status: CheckStatus;
  check: string;
  detail: string;
  fix?: string;
}

const MIN_NODE = 22;
const RECOMMENDED_NODE = 24;

export function checkNode(version = process.versions.node): CheckResult {
  const major = Number(version.split('.')[0]);
  if (major >= RECOMMENDED_NODE) return { status: 'ok', check: 'node', detail: `v${version}` };
  if (major >= MIN_NODE) {
    return { status: 'warn', check: 'node', detail: `v${version} is supported; the project runs on ${RECOMMENDED_NODE}`, fix: 'install Node.js 24 LTS' };
  }
  return { status: 'fail', check: 'node', detail: `v${version} is too old (>= ${MIN_NODE} required)`, fix: 'install Node.js 24 LTS (https://nodejs.org)' };
}

/** Where the server keeps its state: what mode the configuration selects, and (embedded) that the data directory is writable. */
export function checkStorage(config: AppConfigValues): CheckResult {
  if (config.mode === 'scaled') return { status: 'ok', check: 'mode', detail: 'scaled: Postgres at DATABASE_URL, BullMQ on REDIS_URL' };
  const dir = resolve(config.database.dataDir);
  // Nothing is created: the directory, or the nearest parent the server would create it in, must be writable.
  let existing = dir;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  try {
    accessSync(existing, constants.W_OK);
  } catch (err) {
    return {
      status: 'fail',
      check: 'mode',
      detail: `embedded: the data directory ${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      fix: 'set GATEWAY_DATA_DIR to a directory this user may write, or fix its permissions',
    };
  }
  return { status: 'ok', check: 'mode', detail: `embedded: PGlite in ${dir}, in-process queue (set DATABASE_URL and REDIS_URL for scaled mode)` };
}

/** Names of variables the server does not read as written (values are never shown: they may be secrets). */
export function checkConfigWarnings(config: AppConfigValues): CheckResult | undefined {
  if (config.warnings.length === 0) return undefined;
  const names = config.warnings.map((w) => (w.did_you_mean ? `${w.variable} (did you mean ${w.did_you_mean}?)` : w.variable));
  return { status: 'warn', check: 'config', detail: `not read as written: ${names.join(', ')}`, fix: 'rename or remove them (docs/configuration.md)' };
}

const USERNS_FIX =
  'allow unprivileged user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1` (Debian), ' +
  '`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10+); in a container, an unconfined seccomp/AppArmor ' +
  'profile for the worker; or GATEWAY_TASK_SANDBOX=none to run task commands without isolation';

/** The namespaces the worker's sandbox uses (src/modules/workspaces/sandbox), over a read-only `/`. */
const PROBE_ARGS = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session', '--ro-bind', '/', '/'];
const PROBE_TAIL = ['--dev', '/dev', '--proc', '/proc', 'true'];

/** bubblewrap present and able to make a user namespace: it actually runs `true` in one. */
export function checkSandbox(config: AppConfigValues): CheckResult {
  if (config.tasks.sandbox === 'none') {
    return {
      status: 'warn',
      check: 'sandbox',
      detail: 'GATEWAY_TASK_SANDBOX=none: task commands run without OS isolation',
      fix: 'install bubblewrap and unset GATEWAY_TASK_SANDBOX',
    };
  }
  const bwrap = config.tasks.sandboxBwrap;
  const run = spawnSync(bwrap, ['--unshare-user', ...PROBE_ARGS, ...PROBE_TAIL], { timeout: 5000, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const code = (run.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return {
      status: 'fail',
      check: 'sandbox',
      detail: `bubblewrap (${bwrap}) not found: the worker refuses task commands`,
      fix: 'install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`), or GATEWAY_TASK_SANDBOX=none to run them without isolation',
    };
  }
  if (!run.error && run.status === 0) return { status: 'ok', check: 'sandbox', detail: `${bwrap} runs commands in a user namespace` };
  const problem = run.error ? (code ?? run.error.message) : `exit ${run.status ?? run.signal}: ${run.stderr.trim().split('\n')[0]}`;
  // Root needs no user namespace: the worker's own probe does without one.
  if (process.getuid?.() === 0 && spawnSync(bwrap, [...PROBE_ARGS, ...PROBE_TAIL], { timeout: 5000, stdio: 'ignore' }).status === 0) {
    return { status: 'ok', check: 'sandbox', detail: `${bwrap} works as root (no user namespace: ${problem})` };
  }
  return { status: 'fail', check: 'sandbox', detail: `${bwrap} cannot make its namespaces (${problem}): the worker refuses task commands`, fix: USERNS_FIX };
}

/** Whether the server could listen on HOST:PORT now; when not, whether a Hecate server is what holds it. */
export async function checkPort(config: AppConfigValues): Promise<CheckResult> {
  const { host, port } = config.server;
  const problem = await new Promise<string | null>((done) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    server.listen(port, host, () => server.close(() => done(null)));
  });
  if (!problem) return { status: 'ok', check: 'port', detail: `${host}:${port} is free` };
  if (problem === 'EADDRINUSE') {
    const hecate = (await hecateAt(config.server))?.version;
    return {
      status: 'fail',
      check: 'port',
      detail: `${host}:${port} is in use${hecate ? ` by a Hecate server (version ${hecate})` : ''}`,
      fix: hecate ? 'stop that server first, or set PORT to a free port' : 'stop what listens there, or set PORT to a free port',
    };
  }
  return {
    status: 'fail',
    check: 'port',
    detail: `cannot listen on ${host}:${port} (${problem})`,
    fix: problem === 'EACCES' ? 'use a PORT above 1023' : 'set HOST to an address of this machine (127.0.0.1 by default)',
  };
}
