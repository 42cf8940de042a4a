import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
// Re-exported for the client pool, which requires this module lazily (mcp-client-pool.service.ts).
export { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import type { McpConfig } from '@core/config/groups/mcp.env';
import type { TasksConfig } from '@core/config/groups/tasks.env';
import { checkOutboundUrl } from '@core/net/outbound-url-policy';
import { ignoreFailure } from '@core/logging/ignore-failure';
import type { CommandSandbox } from '@modules/workspaces';
import type { McpServerSpec } from './mcp-server-spec';
import { EnvSource, resolveSecretMap, scrubSecrets } from './mcp-secrets';
import { secretReferenceAllowed, stdioNetwork } from './mcp-policy';
import { SandboxedStdioTransport } from './sandboxed-stdio.transport';
import { boundedResponse } from './bounded-response';
import { stderrSummary } from './stderr-summary';

const CLIENT_INFO = { name: 'hecate', version: '1' };

/**
 * Where a stdio server runs: the run's workspace (its cwd and HOME, the only writable place). Its network is not the
 * caller's to choose: only a GATEWAY_MCP_STDIO_ALLOW entry matching the server grants it.
 */
export interface McpSpawnContext {
  workspace: string;
}

export interface McpConnectDeps {
  sandbox: () => CommandSandbox;
  tasks: TasksConfig;
  mcp: McpConfig;
  selfPort: number;
  env: () => EnvSource;
}

/** A connected MCP client and what is needed to diagnose and end it. */
export interface McpConnection {
  readonly client: Client;
  readonly transport: 'stdio' | 'http';
  readonly pid: number | null;
  /** Why the server is gone (exit status and stderr tail, secrets scrubbed), for tool errors. */
  diagnostic(): string;
  /** Called once when the connection closes by itself (process exit, transport error). */
  onClosed(listener: () => void): void;
  close(): Promise<void>;
}

/** The server's tool catalog (all pages); none for a server that does not offer tools at all (no `tools` capability). */
export async function listAllTools(client: Client, options: { signal: AbortSignal; timeout: number }): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, options);
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * Starts (stdio, through the worker's command sandbox) or reaches (Streamable HTTP, through the outbound policy,
 * connecting to the address that was checked) one MCP server and runs `initialize`. Throws with a message that
 * names the server and never carries a secret value.
 */
export async function connectMcpServer(
  spec: McpServerSpec,
  ctx: McpSpawnContext,
  deps: McpConnectDeps,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<McpConnection> {
  return spec.url !== undefined ? connectHttp(spec, deps, options) : connectStdio(spec, ctx, deps, options);
}

async function connectStdio(spec: McpServerSpec, ctx: McpSpawnContext, deps: McpConnectDeps, options: { signal: AbortSignal; timeoutMs: number }) {
  const sandbox = deps.sandbox();
  const refusal = sandbox.refusal();
  if (refusal) throw new Error(`MCP server "${spec.name}" cannot start: ${refusal}`);
  const secrets = resolveSecretMap(spec.name, 'env', spec.env, deps.env(), (name) => secretReferenceAllowed(name, deps.mcp));
  const argv = sandbox.wrap([spec.command ?? '', ...(spec.args ?? [])], {
    workspace: ctx.workspace,
    cwd: ctx.workspace,
    readOnly: false,
    network: stdioNetwork(spec, deps.mcp),
  });
  const transport = new SandboxedStdioTransport({
    argv,
    cwd: ctx.workspace,
    env: { ...deps.tasks.childEnv, HOME: ctx.workspace, ...secrets },
    maxMessageBytes: deps.mcp.maxMessageBytes,
  });
  const values = Object.values(secrets);
  const diagnostic = () => {
    const status = transport.exitStatus() ?? 'is not answering';
    const stderr = stderrSummary(scrubSecrets(transport.stderrTail(), values));
    return `MCP server "${spec.name}" ${status}${stderr ? `; stderr: ${stderr}` : ''}`;
  };
  const client = new Client(CLIENT_INFO);
  try {
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs });
  } catch (err) {
    await transport.close().catch(ignoreFailure('closing an MCP stdio transport that did not connect', 'the connect error is thrown instead'));
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${spec.command}: command not found` : (err as Error).message;
    // No `cause`: the original error may quote a secret value; the message is scrubbed.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`MCP server "${spec.name}" did not start: ${scrubSecrets(why, values)}${transport.exitStatus() ? ` (${diagnostic()})` : ''}`);
  }
  return wrap(client, 'stdio', transport.pid, diagnostic, () => transport.close());
}

async function connectHttp(spec: McpServerSpec, deps: McpConnectDeps, options: { signal: AbortSignal; timeoutMs: number }) {
  const verdict = await checkOutboundUrl(spec.url ?? '', { ...deps.tasks.outbound, selfPort: deps.selfPort });
  if (!verdict.ok) throw new Error(`MCP server "${spec.name}": ${verdict.message}`);
  const headers = resolveSecretMap(spec.name, 'headers', spec.headers, deps.env(), (name) => secretReferenceAllowed(name, deps.mcp));
  const family = verdict.address.includes(':') ? 6 : 4;
  // Pinned: every connection goes to the checked address (no second DNS answer), never to another host.
  const agent = new Agent({
    connect: {
      lookup: (_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) =>
        opts?.all ? cb(null, [{ address: verdict.address, family }]) : cb(null, verdict.address, family),
    } as never,
  });
  const pinnedFetch: FetchLike = async (url, init) => {
    const target = new URL(String(url));
    if (target.host !== verdict.url.host || target.protocol !== verdict.url.protocol)
      throw new Error(`MCP server "${spec.name}": request to another origin refused`);
    const res = (await undiciFetch(target, { ...(init as object), dispatcher: agent, redirect: 'manual' })) as unknown as Response;
    return boundedResponse(res, deps.mcp.maxMessageBytes, spec.name);
  };
  const transport = new StreamableHTTPClientTransport(verdict.url, { fetch: pinnedFetch, requestInit: { headers } });
  const values = Object.values(headers);
  const client = new Client(CLIENT_INFO);
  let closedWhy = '';
  transport.onerror = (err) => (closedWhy = err.message);
  const close = async () => {
    // Each step is best effort toward a server that may be gone (it may also refuse the session DELETE).
    await transport
      .terminateSession()
      .catch(ignoreFailure('ending an MCP HTTP session', 'a server that cannot be told keeps or expires the session itself; this client never uses it again'));
    await client.close().catch(ignoreFailure('closing an MCP client', 'it is not used again'));
    await agent.close().catch(ignoreFailure('closing an MCP HTTP agent', 'its sockets are not used again'));
  };
  try {
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs });
  } catch (err) {
    await close();
    // No `cause`: the original error may quote a header value; the message is scrubbed.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`MCP server "${spec.name}" (${verdict.url.origin}) did not connect: ${scrubSecrets((err as Error).message, values)}`);
  }
  const diagnostic = () => `MCP server "${spec.name}" (${verdict.url.origin}) is unreachable${closedWhy ? `: ${scrubSecrets(closedWhy, values)}` : ''}`;
  return wrap(client, 'http', null, diagnostic, close);
}

function wrap(client: Client, transport: 'stdio' | 'http', pid: number | null, diagnostic: () => string, close: () => Promise<void>): McpConnection {
  const listeners: Array<() => void> = [];
  let closing = false;
  client.onclose = () => {
    if (!closing) for (const l of listeners) l();
  };
  return {
    client,
    transport,
    pid,
    diagnostic,
    onClosed: (l) => listeners.push(l),
    async close() {
      closing = true;
      await close();
      await client.close().catch(ignoreFailure('closing an MCP client', 'it is not used again'));
    },
  };
}
