import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeExit, SupervisedProcess } from '@modules/workspaces';

const STDERR_TAIL = 2048;
const KILL_GRACE_MS = 1000;
const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** A stdio MCP server broke the protocol in a way that ends it (a message over the cap). */
export class McpStdioProtocolError extends Error {}

/**
 * MCP over stdio to a process started with an argv the command sandbox built. Unlike the SDK's
 * StdioClientTransport it passes exactly the environment given (no HOME/USER/SHELL of the worker), runs the process
 * under the workspaces' supervisor — its own group, so closing it kills the whole tree (SIGTERM, SIGKILL after a
 * grace) — and keeps the tail of stderr and the exit status for diagnostics. Its stdout is framed here with a bound: a line over
 * `maxMessageBytes` (GATEWAY_MCP_MAX_MESSAGE_BYTES) kills the server with a clear diagnostic — nothing a server
 * writes can throw out of a stream handler and take the worker down.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private proc: SupervisedProcess | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private violation: string | null = null;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(private readonly spec: { argv: string[]; cwd: string; env: Record<string, string>; maxMessageBytes?: number }) {}

  private get maxBytes(): number {
    return this.spec.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  /** "exited with code 3" / "killed by SIGKILL", or null while running. */
  exitStatus(): string | null {
    if (this.violation) return this.violation;
    if (!this.exit) return null;
    return describeExit(this.exit);
  }

  stderrTail(): string {
    return this.proc?.stderrTail() ?? '';
  }

  start(): Promise<void> {
    const proc = SupervisedProcess.spawn({ ...this.spec, stdin: 'pipe', graceMs: KILL_GRACE_MS, stderrTail: STDERR_TAIL });
    this.proc = proc;
    const child = proc.child;
    child.stdin?.on('error', (err) => this.onerror?.(err));
    child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    void proc.exited.then((exit) => {
      this.exit = exit;
      this.onclose?.();
    });
    return proc.started().catch((err: Error) => {
      this.onerror?.(err);
      throw err;
    });
  }

  /** Splits stdout into lines without ever holding more than the cap of one unfinished line. */
  private onStdout(chunk: Buffer): void {
    if (this.violation) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.pendingBytes + piece.length > this.maxBytes) return this.tooLarge();
      const line = this.pending.length ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      this.deliver(line);
      if (this.violation || this.exit) return;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    this.pendingBytes += rest.length;
    if (this.pendingBytes > this.maxBytes) return this.tooLarge();
    this.pending.push(rest);
  }

  private deliver(line: Buffer): void {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (!text.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.onerror?.(err as Error);
    }
  }

  /** The server wrote one message over the cap: it is killed (its calls fail with this reason), the worker lives. */
  private tooLarge(): void {
    this.violation = `wrote one message larger than ${this.maxBytes} bytes (GATEWAY_MCP_MAX_MESSAGE_BYTES) and was stopped`;
    this.pending = [];
    this.pendingBytes = 0;
    this.onerror?.(new McpStdioProtocolError(`MCP server ${this.violation}`));
    void this.close();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.proc?.child.stdin;
      if (!stdin || this.exit || stdin.destroyed) {
        reject(new Error('MCP server process is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    await this.proc?.stop();
    this.pending = [];
  }
}
