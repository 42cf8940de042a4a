import { ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { LIFELINE_FD } from './lifeline';

/** How a process ended: its exit code, or the signal that killed it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedSpec {
  /** The argv to run (as the command sandbox built it). */
  argv: string[];
  cwd: string;
  /** Exactly the environment the process gets (nothing of the worker's own). */
  env: Record<string, string>;
  /** `pipe` when the caller speaks a protocol over stdin (MCP, ACP); `ignore` for a command. */
  stdin: 'pipe' | 'ignore';
  /** How long `stop()`/`terminate()` wait after SIGTERM before SIGKILL. */
  graceMs: number;
  /** Keep the last this many characters of stderr for `stderrTail()`; unset: the caller reads stderr itself. */
  stderrTail?: number;
}

/** "exited with code 3" / "killed by SIGKILL". */
export const describeExit = (exit: ProcessExit): string => (exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`);

/**
 * One child process in its own process group (`detached`), so that stopping it stops everything it started: SIGTERM
 * to the group, SIGKILL to the group after a grace, and once the leader is gone whatever is left in the group is
 * SIGKILLed too (a background child, a helper the launcher did not wait for). Keeps the exit status and, when asked,
 * the tail of stderr. The one place the worker supervises a process: commands (`runProcess`), stdio MCP servers, ACP
 * adapters and the adapter `--version` probe. Each gets the worker's lifeline as fd 3 (./lifeline.ts), closed here the
 * moment the process exits.
 */
export class SupervisedProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited and its stdio is closed (also after a failed spawn). */
  readonly exited: Promise<ProcessExit>;
  private readonly running: Promise<void>;
  private status: ProcessExit | null = null;
  private stderr = '';
  private killTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(private readonly spec: SupervisedSpec) {
    const child = spawn(spec.argv[0], spec.argv.slice(1), { cwd: spec.cwd, env: spec.env, detached: true, stdio: [spec.stdin, 'pipe', 'pipe', 'pipe'] });
    this.child = child;
    // Nothing is ever written to the lifeline; closing it when the process exits lets `close` follow (a guard left
    // waiting on it — no PID namespace to end it — sees end of file and kills what remains of its group).
    const lifeline = child.stdio[LIFELINE_FD] as Readable | null | undefined;
    if (lifeline) {
      lifeline.on('error', () => undefined);
      lifeline.resume();
      child.once('exit', () => lifeline.destroy());
    }
    this.running = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    // A spawn failure is reported by started(); nobody need be listening for it.
    this.running.catch(() => undefined);
    this.exited = new Promise((resolve) =>
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        this.status = { code, signal };
        clearTimeout(this.killTimer);
        // The group may outlive its leader: nothing is left behind.
        this.signal('SIGKILL');
        resolve(this.status);
      }),
    );
    const tail = spec.stderrTail;
    if (tail) child.stderr?.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-tail)));
  }

  static spawn(spec: SupervisedSpec): SupervisedProcess {
    return new SupervisedProcess(spec);
  }

  /** Resolves once the process runs; rejects with the spawn error (ENOENT, EACCES…). */
  started(): Promise<void> {
    return this.running;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** How it ended, or null while it runs. */
  get exit(): ProcessExit | null {
    return this.status;
  }

  /** The exit in words ("exited with code 3" / "killed by SIGKILL"), or null while it runs. */
  exitReason(): string | null {
    return this.status ? describeExit(this.status) : null;
  }

  stderrTail(): string {
    return this.stderr.trim();
  }

  /** Sends `signal` to the whole process group (to the leader alone when the group cannot be signalled). */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        if (this.status === null) this.child.kill(signal);
      } catch {
        // the process is gone: nothing to signal
      }
    }
  }

  /** SIGTERM to the group now, SIGKILL after the grace unless it has exited by then; does not wait. */
  terminate(): void {
    if (this.status) return;
    this.signal('SIGTERM');
    this.killTimer ??= setTimeout(() => this.signal('SIGKILL'), this.spec.graceMs);
  }

  /** Closes stdin, terminates the group (SIGTERM, SIGKILL after the grace) and waits until the process is gone. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        this.child.stdin?.end();
      } catch {
        // stdin already closed
      }
      this.terminate();
      await this.exited;
    })();
    return this.stopping;
  }
}
