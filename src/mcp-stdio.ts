import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RawEnv } from '@core/config/config.loader';
import { ConfigValidationError } from '@core/config/config.loader';

/**
 * `npm run mcp`: Hecate as an MCP server over stdio, for clients that launch their servers (Claude Desktop, editors).
 * It holds no tools of its own: it relays every request to a Hecate server's `/mcp` (Streamable HTTP, with the API
 * key as a bearer token), so the tools, their schemas and their tenant scoping are the server's — one implementation.
 * Stdout carries only protocol frames; everything else goes to stderr. It does not load the server's modules.
 */

/** A relayed request waits as long as the client that sent it (which cancels it); the server bounds its own waits. */
const RELAY_TIMEOUT_MS = 24 * 3_600_000;

export interface StdioRelayConfig {
  endpoint: URL;
  apiKey: string | undefined;
}

/** HECATE_BASE_URL (the server, or its /mcp URL) and HECATE_API_KEY; throws naming each bad variable. */
export function stdioRelayConfig(env: RawEnv): StdioRelayConfig {
  const base = env.HECATE_BASE_URL?.trim();
  const problems: string[] = [];
  let endpoint: URL | undefined;
  if (!base) problems.push('HECATE_BASE_URL: required (the Hecate server to relay to, e.g. http://127.0.0.1:8765)');
  else {
    try {
      endpoint = new URL(base.replace(/\/+$/, '').replace(/(\/mcp)?$/, '/mcp'));
      if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      problems.push(`HECATE_BASE_URL: ${JSON.stringify(base)} is not an http(s) URL`);
    }
  }
  if (problems.length > 0 || !endpoint) throw new ConfigValidationError(problems);
  return { endpoint, apiKey: env.HECATE_API_KEY?.trim() || undefined };
}

const log = (line: string): void => void process.stderr.write(`hecate mcp: ${line}\n`);

/**
 * An upstream error as the downstream client should see it: a JSON-RPC error keeps its code and data, with its message
 * stripped of the "MCP error N:" prefix the client adds again; anything else (the server unreachable, an HTTP refusal)
 * is an internal error with its message.
 */
function relayed(err: unknown): Error {
  if (!(err instanceof McpError)) return new Error(err instanceof Error ? err.message : String(err));
  return Object.assign(new Error(err.message.replace(/^MCP error -?\d+: /, '')), { code: err.code, data: err.data });
}

/** Connects to the server (exits 1 with the reason when it cannot), then serves stdin/stdout until stdin closes. */
export async function serveStdio(config: StdioRelayConfig, version: string): Promise<void> {
  const headers: Record<string, string> = config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {};
  const upstream = new Client({ name: 'hecate-mcp-stdio', version });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(config.endpoint, { requestInit: { headers } }));
  } catch (err) {
    // A refused connection names its cause (ECONNREFUSED, …); an HTTP refusal its status and the server's error envelope.
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
    const status = err instanceof StreamableHTTPError && err.code ? ` (HTTP ${err.code})` : '';
    log(`cannot connect to ${config.endpoint.href}${status}: ${err instanceof Error ? err.message : String(err)}${cause}`);
    process.exit(1);
  }
  const remote = upstream.getServerVersion();
  const server = new Server(
    { name: remote?.name ?? 'hecate', title: remote?.title, version: remote?.version ?? version },
    { capabilities: upstream.getServerCapabilities() ?? {}, instructions: upstream.getInstructions() },
  );
  // Everything but initialize and ping (answered here) goes upstream as it came; a cancelled request is cancelled there.
  server.fallbackRequestHandler = async (request, extra) => {
    try {
      return await upstream.request({ method: request.method, params: request.params }, ResultSchema, { signal: extra.signal, timeout: RELAY_TIMEOUT_MS });
    } catch (err) {
      throw relayed(err);
    }
  };
  server.onerror = (err) => log(`stdio: ${err.message}`);
  const stop = (why: string) => {
    log(`${why}; exiting`);
    void Promise.allSettled([server.close(), upstream.close()]).then(() => process.exit(0));
  };
  process.stdin.once('end', () => stop('stdin closed'));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stop(signal));
  await server.connect(new StdioServerTransport());
  log(`relaying stdio to ${config.endpoint.href}`);
}
