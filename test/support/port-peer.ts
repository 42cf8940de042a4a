import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

interface PeerMessage {
  event?: string;
  id?: number;
  ok?: boolean;
  error?: string;
  [k: string]: unknown;
}

/** Drives test/support/port-peer-process.js: the Redis adapters running in another process. */
export class PortPeer {
  readonly messages: { channel: string; message: unknown }[] = [];
  private readonly pending = new Map<number, (m: PeerMessage) => void>();
  private nextId = 1;
  private constructor(private readonly proc: ChildProcess) {}

  static async start(redisUrl: string, prefix: string): Promise<PortPeer> {
    const proc = spawn(process.execPath, [resolve(__dirname, 'port-peer-process.js'), redisUrl, prefix], { stdio: ['pipe', 'pipe', 'pipe'] });
    const peer = new PortPeer(proc);
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const ready = new Promise<void>((resolveReady, reject) => {
      proc.once('exit', (code) => reject(new Error(`port peer exited ${code}: ${stderr}`)));
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        const msg = JSON.parse(line) as PeerMessage;
        if (msg.event === 'ready') resolveReady();
        else if (msg.event === 'message') peer.messages.push({ channel: msg.channel as string, message: msg.message });
        else if (msg.id !== undefined) peer.pending.get(msg.id)?.(msg);
      });
    });
    await ready;
    return peer;
  }

  async call(op: string, args: Record<string, unknown> = {}): Promise<PeerMessage> {
    const id = this.nextId++;
    const reply = new Promise<PeerMessage>((res) => this.pending.set(id, res));
    this.proc.stdin!.write(`${JSON.stringify({ id, op, ...args })}\n`);
    const msg = await reply;
    if (!msg.ok) throw new Error(`peer ${op} failed: ${msg.error}`);
    return msg;
  }

  async stop(): Promise<void> {
    this.proc.stdin!.end();
    await new Promise((r) => this.proc.once('exit', r));
  }
}
