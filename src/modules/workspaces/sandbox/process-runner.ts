import { SupervisedProcess } from './supervised-process';

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
 * Runs one subprocess under the supervisor (its own process group), so timeout, cancel and output-limit kill the
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
    const proc = SupervisedProcess.spawn({ argv: spec.argv, cwd: spec.cwd, env: spec.env, stdin: 'ignore', graceMs: KILL_GRACE_MS });
    const capture = (stream: 'stdout' | 'stderr', list: Buffer[]) => (chunk: Buffer) => {
      const room = spec.maxOutputBytes - kept;
      if (room <= 0) {
        if (!truncated) {
          truncated = true;
          proc.terminate();
        }
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      kept += part.length;
      list.push(part);
      spec.onOutput?.(stream, part);
      if (chunk.length > room) {
        truncated = true;
        proc.terminate();
      }
    };
    proc.child.stdout!.on('data', capture('stdout', out));
    proc.child.stderr!.on('data', capture('stderr', err));
    const timer = setTimeout(() => {
      timedOut = true;
      proc.terminate();
    }, spec.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      proc.terminate();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });
    const finish = (exitCode: number | null, signal: string | null, spawnError: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      spec.signal.removeEventListener('abort', onAbort);
      // The supervisor kills whatever is left in the group once the leader is gone (a failed spawn has no group).
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
        pid: proc.pid,
      });
    };
    proc.started().catch((e: Error) => finish(null, null, e.message));
    void proc.exited.then((exit) => finish(exit.code, exit.signal, null));
  });
}
