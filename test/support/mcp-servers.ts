import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { freePort, waitFor } from './infra';

/** Real MCP servers the MCP tests drive (from this checkout's node_modules) and a misbehaving one of our own. */
export const ROOT = resolve(__dirname, '../..');
export const NODE_MODULES = realpathSync(join(ROOT, 'node_modules'));
export const EVERYTHING = join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(NODE_MODULES, '@modelcontextprotocol/server-filesystem/dist/index.js');
/**
 * Tools `instance`, `env`, `env-keys`, `crash` (exits 3 mid-call), `hang`, `slow-append` (side-effecting: appends to
 * calls.log in its cwd before and after a wait); argv `silent` answers nothing at all.
 */
export const MISBEHAVING = join(__dirname, 'mcp/misbehaving-server.mjs');
/** Tools `pid`, `huge-line` (one stdout line over 10 MiB), `connect` (TCP targets → what it reached), `env`, `env-sha256` . */
export const HOSTILE = join(__dirname, 'mcp/hostile-server.mjs');
/** What a worker's sandbox must mount read-only for those servers to run in it. */
export const MCP_SANDBOX_READ_PATHS = `${ROOT},${NODE_MODULES}`;

/** Processes whose command line contains `pattern` (the tests tag their servers with a unique argument). */
export function processesMatching(pattern: string): number {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** `server-everything streamableHttp` on a free port (outside the sandbox: it is a remote server here). */
export async function startEverythingHttp(): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  const listening = () =>
    new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        r(true);
      });
      s.on('error', () => r(false));
    });
  await waitFor(listening, { timeoutMs: 15_000, intervalMs: 100, what: 'server-everything (streamableHttp) to listen' });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}
