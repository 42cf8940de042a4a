import type { ChildProcess } from 'node:child_process';
import type * as Acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { within } from '@core/async/within';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { describeExit as exitInWords, SupervisedProcess } from '@modules/workspaces';

export type { Acp };

/** The SDK is ESM only; the server is CommonJS: loaded once, on first use, on the worker. */
let sdk: Promise<typeof Acp> | undefined;
export const loadAcp = (): Promise<typeof Acp> => (sdk ??= import('@agentclientprotocol/sdk'));

const STDERR_TAIL = 4096;
const KILL_GRACE_MS = 1500;

/** Why an adapter connection ended other than by our close: each becomes a clear error on the turn, never a hung worker. */
export class AcpProtocolError extends Error {
  constructor(
    readonly kind: 'not_acp' | 'message_too_large' | 'exited' | 'timeout' | 'spawn_failed',
    message: string,
  ) {
    super(message);
  }
}

export interface AcpSpawnSpec {
  /** The argv as the command sandbox built it. */
  argv: string[];
  cwd: string;
  /** Exactly the environment the adapter gets (nothing of the worker's own). */
  env: Record<string, string>;
  /** A line (one ACP message) larger than this ends the connection with `message_too_large`. */
  maxMessageBytes: number;
}

export interface AcpClientHandlers {
  onUpdate(notification: Acp.SessionNotification): void;
  onPermission(request: Acp.RequestPermissionRequest, signal: AbortSignal): Promise<Acp.RequestPermissionResponse>;
}

/**
 * One ACP agent process and the client connection to it (ACP v1 over NDJSON stdio). The process runs in its own
 * process group, so `close()` ends the whole tree (SIGTERM, then SIGKILL after a grace) even when the adapter's launcher
 * does not forward signals (codex-acp's Node wrapper). Its stdout must be ACP: a line that is not a JSON object, or one
 * larger than the bound, ends the connection with a typed error instead of being skipped.
 */
export class AcpProcess {
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private failed: AcpProtocolError | null = null;
  private closing = false;
  readonly exited: Promise<void>;
  private readonly ended = new AbortController();

  private constructor(
    private readonly proc: SupervisedProcess,
    readonly connection: Acp.ClientConnection,
  ) {
    this.exited = proc.exited.then(() => undefined);
  }

  static async start(spec: AcpSpawnSpec, handlers: AcpClientHandlers): Promise<AcpProcess> {
    const acp = await loadAcp();
    const proc = SupervisedProcess.spawn({ argv: spec.argv, cwd: spec.cwd, env: spec.env, stdin: 'pipe', graceMs: KILL_GRACE_MS, stderrTail: STDERR_TAIL });
    const child = proc.child;
    await proc.started().catch((err: NodeJS.ErrnoException) => {
      throw new AcpProtocolError('spawn_failed', `${spec.argv[0]}: ${err.code ?? err.message}`);
    });
    const ref: { self?: AcpProcess } = {};
    const stream = ndjson(child, spec.maxMessageBytes, (err) => ref.self?.fail(err));
    const connection = acp
      .client({ name: 'hecate' })
      .onNotification(acp.methods.client.session.update, ({ params }) => handlers.onUpdate(params))
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => handlers.onPermission(params, signal))
      .connect(stream);
    const self = new AcpProcess(proc, connection);
    ref.self = self;
    void proc.exited.then((exit) => {
      self.exit = exit;
      if (!self.closing) self.fail(new AcpProtocolError('exited', `the adapter process ${describeExit(self.exit)}${self.tailNote()}`));
      self.ended.abort();
      connection.close(self.failed ?? new Error('adapter closed'));
    });
    return self;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get alive(): boolean {
    return this.exit === null && this.failed === null;
  }

  /** Aborts when the process exits or the connection fails. */
  get signal(): AbortSignal {
    return this.ended.signal;
  }

  /** The reason the connection ended on its own (null while it is fine or after our close). */
  failure(): AcpProtocolError | null {
    return this.failed;
  }

  stderrTail(): string {
    return this.proc.stderrTail();
  }

  /**
   * A request to the agent, bounded by `timeoutMs` and by the process: its exit or a protocol violation rejects at
   * once with the typed error (instead of the connection's generic "closed").
   */
  async request<T>(method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    if (this.failed) throw this.failed;
    let timer: NodeJS.Timeout | undefined;
    let onEnd: (() => void) | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race([
        this.connection.agent.request<T>(method, params),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new AcpProtocolError('timeout', `${method}: the adapter did not answer within ${Math.round(timeoutMs / 1000)} s`)),
            timeoutMs,
          );
          onEnd = () => reject(this.failed ?? new AcpProtocolError('exited', `the adapter process ended during ${method}`));
          this.ended.signal.addEventListener('abort', onEnd, { once: true });
          if (signal) {
            onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
    } catch (err) {
      // The connection's own "closed" error says less than why it closed (the exit, the line that was not ACP),
      // which the process's exit may report a moment later.
      if (!(err instanceof AcpProtocolError) && !this.closing && !this.failed && this.exit === null) {
        await within(this.exited, 1000);
      }
      if (this.failed && !(err instanceof AcpProtocolError)) throw this.failed;
      throw withDetails(err);
    } finally {
      clearTimeout(timer);
      if (onEnd) this.ended.signal.removeEventListener('abort', onEnd);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.agent
      .notify(method, params)
      .catch(
        ignoreFailure(
          'ACP notification',
          "it fails once the adapter's stdin is gone, which `signal` reports; an unheeded session/cancel is enforced by the turn's cancel grace",
        ),
      );
  }

  /**
   * Ends the process group (SIGTERM, SIGKILL after a grace) and waits for the process to be gone; whatever the
   * adapter left in its group (a `claude auth status` child, a command it ran) goes too.
   */
  async close(): Promise<void> {
    this.closing = true;
    await this.proc.stop();
  }

  private fail(err: AcpProtocolError): void {
    if (this.failed || this.closing) return;
    this.failed = err;
    this.ended.abort();
    this.proc.signal('SIGKILL');
  }

  private tailNote(): string {
    const tail = this.stderrTail();
    return tail ? `; stderr: ${tail.slice(-500)}` : '';
  }
}

/** "exited with code 3" / "was killed by SIGKILL" (the supervisor's words, read after "the adapter process"). */
export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `was ${exitInWords(exit)}` : exitInWords(exit);
}

/**
 * The ACP stream over the child's stdio: NDJSON out; in, one JSON object per line, strictly — anything else (a log
 * line on stdout, a line over `maxBytes`) calls `onViolation` and ends the readable side.
 */
function ndjson(child: ChildProcess, maxBytes: number, onViolation: (err: AcpProtocolError) => void): Acp.Stream {
  const stdout = child.stdout!;
  const stdin = child.stdin!;
  stdin.on('error', () => undefined);
  const readable = new ReadableStream<Acp.AnyMessage>({
    start(controller) {
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let done = false;
      const stop = (err: AcpProtocolError) => {
        if (done) return;
        done = true;
        onViolation(err);
        controller.error(err);
        stdout.removeAllListeners('data');
      };
      const line = (buf: Buffer) => {
        const text = buf.toString('utf8').trim();
        if (!text) return;
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          return stop(new AcpProtocolError('not_acp', `the adapter wrote something that is not ACP on stdout: ${JSON.stringify(text.slice(0, 200))}`));
        }
        if (message === null || typeof message !== 'object' || Array.isArray(message)) {
          return stop(new AcpProtocolError('not_acp', `the adapter wrote a JSON value that is not an ACP message: ${text.slice(0, 200)}`));
        }
        controller.enqueue(message as Acp.AnyMessage);
      };
      stdout.on('data', (chunk: Buffer) => {
        if (done) return;
        let start = 0;
        for (let i = chunk.indexOf(10); i !== -1 && !done; i = chunk.indexOf(10, start)) {
          const piece = chunk.subarray(start, i);
          if (pendingBytes + piece.length > maxBytes) return stop(tooLarge(maxBytes));
          line(pending.length ? Buffer.concat([...pending, piece]) : piece);
          pending = [];
          pendingBytes = 0;
          start = i + 1;
        }
        if (done || start >= chunk.length) return;
        const rest = chunk.subarray(start);
        pendingBytes += rest.length;
        if (pendingBytes > maxBytes) return stop(tooLarge(maxBytes));
        pending.push(rest);
      });
      stdout.once('end', () => {
        if (done) return;
        if (pending.length) line(Buffer.concat(pending));
        done = true;
        controller.close();
      });
    },
  });
  const writable = new WritableStream<Acp.AnyMessage>({
    write(message) {
      return new Promise<void>((resolve, reject) => {
        if (stdin.destroyed || !stdin.writable) return reject(new Error('the adapter process is not running'));
        if (stdin.write(JSON.stringify(message) + '\n')) resolve();
        else stdin.once('drain', () => resolve());
      });
    },
  });
  return { readable, writable };
}

const tooLarge = (maxBytes: number) =>
  new AcpProtocolError('message_too_large', `the adapter sent one ACP message larger than ${Math.round(maxBytes / (1024 * 1024))} MB`);

/**
 * A JSON-RPC error answer keeps its code and data on the error; its message alone ("Internal error") says little, so
 * the data's details (what the agent threw) join it.
 */
function withDetails(err: unknown): unknown {
  const data = (err as { data?: unknown })?.data;
  if (!(err instanceof Error) || data === undefined || data === null) return err;
  const details =
    typeof data === 'string'
      ? data
      : typeof (data as { details?: unknown }).details === 'string'
        ? (data as { details: string }).details
        : JSON.stringify(data);
  if (!details || err.message.includes(details)) return err;
  err.message = `${err.message}: ${details.slice(0, 1000)}`;
  return err;
}
