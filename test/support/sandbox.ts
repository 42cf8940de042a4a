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
