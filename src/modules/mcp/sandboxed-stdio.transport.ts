import { ChildProcess, spawn } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const STDERR_TAIL = 2048;
const KILL_GRACE_MS = 1000;

/**
 * MCP over stdio to a process started with an argv the command sandbox built. Unlike the SDK's
 * StdioClientTransport it passes exactly the environment given (no HOME/USER/SHELL of the worker), starts the
 * process in its own group so closing it kills the whole tree (SIGTERM, SIGKILL after a grace), and keeps the tail
 * of stderr and the exit status for diagnostics.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderr = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closing = false;
  private exited: Promise<void> | undefined;

  constructor(private readonly spec: { argv: string[]; cwd: string; env: Record<string, string> }) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** "exited with code 3" / "killed by SIGKILL", or null while running. */
  exitStatus(): string | null {
    if (!this.exit) return null;
    return this.exit.signal ? `killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
  }

  stderrTail(): string {
    return this.stderr.trim();
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.argv[0], this.spec.argv.slice(1), {
        cwd: this.spec.cwd,
        env: this.spec.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.onclose?.();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (err) {
            this.onerror?.(err as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.exit || stdin.destroyed) {
        reject(new Error('MCP server process is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) return this.exited;
    this.closing = true;
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    this.killGroup('SIGTERM');
    const timer = setTimeout(() => this.killGroup('SIGKILL'), KILL_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
    this.buffer.clear();
  }

  private killGroup(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child?.pid || this.exit) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // gone
      }
    }
  }
}
