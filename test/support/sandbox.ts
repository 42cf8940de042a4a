import { execFileSync, spawnSync } from 'node:child_process';

/** Whether bubblewrap can create its namespaces on this host (the suites that need it fail under CI=true without it). */
export const bwrapWorks =
  spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-net', '--die-with-parent', 'true'], { stdio: 'ignore' }).status === 0;

/** Whether a process whose command line matches `pattern` is running on this host (pgrep -f). */
export function processRunning(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `describe` / `it` for tests that need bubblewrap: they run wherever it works and under CI=true always (so a CI
 * machine without it fails loudly instead of passing them silently); elsewhere they are skipped with the reason printed.
 */
const needsBwrap = bwrapWorks || process.env.CI === 'true';
if (!bwrapWorks && !needsBwrap)
  process.stderr.write('bubblewrap cannot create namespaces on this host: the isolation tests are skipped (they run, and fail, under CI=true)\n');
export const describeWithBwrap = needsBwrap ? describe : describe.skip;
export const itWithBwrap = needsBwrap ? it : it.skip;

/** The uid/gid commands and adapters run as when the server runs as root (GATEWAY_TASK_SANDBOX_UID's default). */
export const SANDBOX_UID = 65534;

/**
 * Gives a test workspace to the sandbox uid (when the tests run as root): an external agent never runs as root, so a
 * root-owned workspace is read-only to it — an operator hands the adapter's workspace to the sandbox uid (or a user).
 */
export function sandboxOwned(dir: string): string {
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', `${SANDBOX_UID}:${SANDBOX_UID}`, dir]);
  return dir;
}
