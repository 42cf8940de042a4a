import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '@core/config/config.loader';
import type { AppConfig } from '@core/config/app-config';
import { McpClientPool } from '@modules/mcp/mcp-client-pool.service';
import { ExecutorRegistry } from '@modules/tasks/executor-registry.service';
import { SandboxService } from '@modules/tasks/sandbox/sandbox.service';
import { freePort } from '../../support/server-process';

export const ROOT = resolve(__dirname, '../../..');
export const NODE_MODULES = realpathSync(join(ROOT, 'node_modules'));
export const EVERYTHING = join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(NODE_MODULES, '@modelcontextprotocol/server-filesystem/dist/index.js');
export const MISBEHAVING = join(__dirname, 'fixtures/misbehaving-server.mjs');

/** The worker side as it runs in production: the real SandboxService (bubblewrap) registered in an ExecutorRegistry. */
export interface PoolHarness {
  config: AppConfig;
  sandbox: SandboxService;
  pool: McpClientPool;
  /** A fresh run workspace under GATEWAY_WORKSPACES_DIR, owned by the sandbox's uid. */
  workspace(): string;
  close(): Promise<void>;
}

export function openPool(env: Record<string, string> = {}): PoolHarness {
  const workspaces = mkdtempSync(join(tmpdir(), 'hecate-mcp-ws-'));
  const config = loadConfig({
    PATH: process.env.PATH,
    GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'hecate-mcp-data-')),
    GATEWAY_WORKSPACES_DIR: workspaces,
    // The MCP servers of these tests live in this checkout's node_modules: the sandbox mounts them read-only.
    GATEWAY_TASK_SANDBOX_READ_PATHS: `${ROOT},${NODE_MODULES}`,
    GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
    GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL: '0',
    ...env,
  }) as AppConfig;
  const sandbox = new SandboxService(config);
  sandbox.onModuleInit();
  const registry = new ExecutorRegistry();
  registry.registerSandbox(sandbox);
  const pool = new McpClientPool(config, registry);
  pool.onModuleInit();
  let n = 0;
  return {
    config,
    sandbox,
    pool,
    workspace() {
      const dir = join(workspaces, `task-${++n}`, 'run');
      mkdirSync(dir, { recursive: true });
      const id = sandbox.workspaceIdentity();
      if (id) {
        chownSync(join(workspaces, `task-${n}`), id.uid, id.gid);
        chownSync(dir, id.uid, id.gid);
      }
      return dir;
    },
    close: () => pool.onModuleDestroy(),
  };
}

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
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        r(true);
      });
      s.on('error', () => r(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error('server-everything (streamableHttp) did not listen');
    await new Promise((r) => setTimeout(r, 100));
  }
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
