import { chownSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@core/config/config.loader';
import type { AppConfig } from '@core/config/app-config';
import { McpClientPool } from '@modules/mcp/mcp-client-pool.service';
import { SandboxService } from '@modules/workspaces/sandbox/sandbox.service';
import { MCP_SANDBOX_READ_PATHS } from '../../support/mcp-servers';

export { EVERYTHING, FILESYSTEM, MISBEHAVING, processesMatching, startEverythingHttp } from '../../support/mcp-servers';

/** The worker side as it runs in production: the real SandboxService (bubblewrap) handed to the pool as its command sandbox. */
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
    GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
    GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
    GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL: '0',
    // The secrets these tests resolve are allowlisted the way an operator would.
    GATEWAY_MCP_SECRET_ENV_ALLOW: 'MCPTEST_*',
    ...env,
  }) as AppConfig;
  const sandbox = new SandboxService(config);
  // Commands run at once; the egress proxy (network: true) listens a moment later.
  void sandbox.onModuleInit();
  const pool = new McpClientPool(config, sandbox);
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
    close: async () => {
      await pool.onModuleDestroy();
      await sandbox.onModuleDestroy();
    },
  };
}
