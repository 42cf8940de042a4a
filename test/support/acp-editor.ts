import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type * as Acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import { waitFor } from './infra';

export type { Acp };

const ROOT = resolve(__dirname, '../..');
/** `npm run acp`'s entrypoint in the build the e2e tests use (HECATE_DIST, like server-process). */
export const ACP_ENTRY = join(ROOT, process.env.HECATE_DIST ?? 'dist', 'src/main.acp.js');

/** How the editor answers a permission request (default: it dismisses it). */
export type PermissionAnswer = (request: Acp.RequestPermissionRequest) => Acp.RequestPermissionResponse | Promise<Acp.RequestPermissionResponse>;

export const choose = (optionId: string): Acp.RequestPermissionResponse => ({ outcome: { outcome: 'selected', optionId } });

/** Runs `node dist/src/main.acp.js` with exactly `env` (plus PATH and HOME) and what it printed. */
export function spawnAcpAgent(env: Record<string, string>) {
  const child = spawn(process.execPath, [ACP_ENTRY], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out, exited };
}

/**
 * An editor built from the ACP SDK's client side (what Zed or a JetBrains plugin does): it launches the agent, speaks
 * ACP over the child's stdio, records every `session/update` and permission request, and answers permissions with
 * `answer`. Everything the agent printed stays in `out` for leak checks.
 */
export class AcpEditor {
  readonly updates: Acp.SessionNotification[] = [];
  readonly permissions: Acp.RequestPermissionRequest[] = [];
  answer: PermissionAnswer = () => ({ outcome: { outcome: 'cancelled' } });

  private constructor(
    readonly agent: Acp.ClientContext,
    private readonly connection: Acp.ClientConnection,
    private readonly proc: ReturnType<typeof spawnAcpAgent>,
  ) {}

  static async launch(env: Record<string, string>): Promise<AcpEditor> {
    const acp = await import('@agentclientprotocol/sdk');
    const proc = spawnAcpAgent(env);
    const ref: { editor?: AcpEditor } = {};
    const connection = acp
      .client({ name: 'test-editor' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        ref.editor!.updates.push(params);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        ref.editor!.permissions.push(params);
        return ref.editor!.answer(params);
      })
      .connect(
        acp.ndJsonStream(Writable.toWeb(proc.child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(proc.child.stdout) as ReadableStream<Uint8Array>),
      );
    ref.editor = new AcpEditor(connection.agent, connection, proc);
    return ref.editor;
  }

  get out(): { stdout: string; stderr: string } {
    return this.proc.out;
  }

  initialize(): Promise<Acp.InitializeResponse> {
    return this.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
  }

  async newSession(cwd: string, mcpServers: Acp.McpServer[] = []): Promise<string> {
    return (await this.agent.request('session/new', { cwd, mcpServers })).sessionId;
  }

  prompt(sessionId: string, text: string): Promise<Acp.PromptResponse> {
    return this.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify('session/cancel', { sessionId });
  }

  /** The updates of one session, from `from` (an index into `updates`) on. */
  of(sessionId: string, from = 0): Acp.SessionUpdate[] {
    return this.updates
      .slice(from)
      .filter((n) => n.sessionId === sessionId)
      .map((n) => n.update);
  }

  /** The agent's message text of a session, chunks joined. */
  text(sessionId: string, from = 0): string {
    return this.of(sessionId, from)
      .flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
      .join('');
  }

  waitForUpdate(pred: (u: Acp.SessionUpdate) => boolean, what: string, from = 0): Promise<Acp.SessionUpdate> {
    return waitFor(() => this.updates.slice(from).find((n) => pred(n.update))?.update, { timeoutMs: 20_000, what });
  }

  /** Closes stdin like an editor that quits, and resolves with the agent's exit code. */
  async close(): Promise<number | null> {
    this.connection.close();
    this.proc.child.stdin.end();
    const timer = setTimeout(() => this.proc.child.kill('SIGKILL'), 5_000);
    const code = await this.proc.exited;
    clearTimeout(timer);
    return code;
  }
}
