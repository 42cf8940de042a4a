import { spawnSync } from 'node:child_process';
import type { SandboxLimitsConfig } from '@core/config/groups/sandbox-limits.env';

/**
 * Per-command resource limits (rlimits set by util-linux `prlimit` right before the command, inherited by everything
 * it starts). Memory is RLIMIT_DATA, not RLIMIT_AS: V8 reserves gigabytes of address space it never touches (a Node.js
 * child dies at start under an address-space limit near its real needs), while RLIMIT_DATA counts only private
 * writable memory (a Node.js child needs about 640 MiB of it to start). RLIMIT_NPROC is counted by the kernel per uid
 * (all processes and threads of that uid on the host), so it is applied only to commands that run as the dedicated
 * sandbox uid: for the server's own user or a workspace owner it would count their unrelated processes, and uid 0 is
 * exempt from it anyway.
 */
export interface CommandLimits {
  processes: number;
  memoryBytes: number;
  fileBytes: number;
}

let prlimitPresent: boolean | undefined;
export const prlimitAvailable = (): boolean => (prlimitPresent ??= spawnSync('prlimit', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0);

/** The limits for a command that runs as `uid` (null: the worker's own user). */
export function limitsFor(config: SandboxLimitsConfig, uid: number | null, sandboxUid: number): CommandLimits {
  return {
    processes: uid !== null && uid === sandboxUid ? config.maxProcesses : 0,
    memoryBytes: config.maxMemoryBytes,
    fileBytes: config.maxFileBytes,
  };
}

/** The `prlimit … --` prefix that applies `limits` (empty when there is nothing to set or no prlimit here). */
export function limitArgv(limits: CommandLimits): string[] {
  if (!prlimitAvailable()) return [];
  const args: string[] = ['--core=0'];
  if (limits.processes > 0) args.push(`--nproc=${limits.processes}`);
  if (limits.memoryBytes > 0) args.push(`--data=${limits.memoryBytes}`);
  if (limits.fileBytes > 0) args.push(`--fsize=${limits.fileBytes}`);
  return ['prlimit', ...args, '--'];
}

/** `--size` for the command's private /tmp tmpfs (bubblewrap ≥ 0.7; it must come right before `--tmpfs`). */
export const tmpSizeArgs = (config: SandboxLimitsConfig): string[] => (config.tmpBytes > 0 ? ['--size', String(config.tmpBytes)] : []);

/** What `/healthz` says about the limits. */
export function describeLimits(config: SandboxLimitsConfig): Record<string, unknown> {
  if (!prlimitAvailable()) return { enforced: false, reason: 'prlimit (util-linux) is not installed' };
  return {
    enforced: true,
    max_processes_per_sandbox_uid: config.maxProcesses || null,
    max_memory_bytes_per_process: config.maxMemoryBytes || null,
    max_file_bytes: config.maxFileBytes || null,
    tmp_bytes: config.tmpBytes || null,
  };
}

const SIGXFSZ_EXIT = 128 + 25;

/** A clearer reason for an exit the limits probably caused (appended to "exit status N"), or ''. */
export function limitHint(exitCode: number | null, signal: string | null, stderr: string): string {
  if (exitCode === SIGXFSZ_EXIT || signal === 'SIGXFSZ' || /File size limit exceeded/i.test(stderr))
    return ' (file size limit exceeded: GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES)';
  if (/Resource temporarily unavailable|fork: retry|Cannot fork|EAGAIN/i.test(stderr)) return ' (process limit reached: GATEWAY_TASK_SANDBOX_MAX_PROCESSES)';
  if (
    /out of memory|memory exhausted|allocation failed|failed to allocate|ERR_MEMORY_ALLOCATION_FAILED|Cannot allocate memory|bad_alloc|MemoryError/i.test(
      stderr,
    )
  )
    return ' (memory limit reached: GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES)';
  return '';
}
