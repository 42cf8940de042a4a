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
