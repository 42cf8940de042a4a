import { spawn } from 'node:child_process';

export interface ProcessSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** stdout + stderr bytes kept; beyond it the process is killed and output marked truncated. */
  maxOutputBytes: number;
  signal: AbortSignal;
  onOutput?(stream: 'stdout' | 'stderr', chunk: Buffer): void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  spawnError: string | null;
  durationMs: number;
  pid: number | undefined;
}

const KILL_GRACE_MS = 1000;

/**
 * Runs one subprocess in its own process group (`detached`), so timeout, cancel and output-limit kill the
 * whole tree: SIGTERM to the group, SIGKILL after a short grace.
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(spec.argv[0], spec.argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const killGroup = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      killTimer ??= setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, KILL_GRACE_MS);
    };
    const capture = (stream: 'stdout' | 'stderr', list: Buffer[]) => (chunk: Buffer) => {
      const room = spec.maxOutputBytes - kept;
      if (room <= 0) {
        if (!truncated) {
          truncated = true;
          killGroup();
        }
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      kept += part.length;
      list.push(part);
      spec.onOutput?.(stream, part);
      if (chunk.length > room) {
        truncated = true;
        killGroup();
      }
    };
    child.stdout.on('data', capture('stdout', out));
    child.stderr.on('data', capture('stderr', err));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });
    const finish = (exitCode: number | null, signal: string | null, spawnError: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      spec.signal.removeEventListener('abort', onAbort);
      // The group may outlive the leader (background children): make sure nothing is left behind.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // no such group
        }
      }
      resolve({
        exitCode,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        timedOut,
        cancelled,
        truncated,
        spawnError,
        durationMs: Date.now() - started,
        pid: child.pid,
      });
    };
    child.once('error', (e) => finish(null, null, e.message));
    child.once('close', (code, sig) => finish(code, sig, null));
  });
}
