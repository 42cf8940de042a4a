import { createHash } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig } from '@core/config/app-config';
import { Liveness } from '@core/health/system-info.decorator';
import { readProcessEnv } from '@core/config/env';
import { rootLogger } from '@core/logging/logger';
import { resolveSecretKey, openSecret } from '@core/crypto/secret-box';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';
import { unsealMcpServers } from './mcp-servers-redaction';
import type { McpConnectDeps, McpConnection, McpSpawnContext } from './mcp-connection';
import { McpApprovalPolicy, McpServerSpec, mcpToolAlias } from './mcp-server-spec';
import { renderToolResult } from './mcp-tool-result';
import { within } from '@core/async/within';
import { ignoreFailure } from '@core/logging/ignore-failure';

/** One MCP tool as the agent loop offers it to the model. */
export interface McpTool {
  /** `mcp__<server>__<tool>`: the name the model calls. */
  alias: string;
  server: string;
  /** The server's own name for the tool. */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean };
  approvalPolicy: McpApprovalPolicy;
}

export interface McpCallOptions {
  /** Aborting cancels the request (`notifications/cancelled`) and rejects with the signal's reason. */
  signal: AbortSignal;
  /** Bound on one call (default 60 s); a call that never answers returns `isError` after it. */
  timeoutMs?: number;
  onProgress?(text: string): void;
}

export interface McpCallResult {
  text: string;
  isError: boolean;
  structured?: unknown;
}

/** The tools of a run's MCP servers, held until `release()`. */
export interface McpToolSet {
  tools: McpTool[];
  /** Calls a tool by alias. Tool failures (unknown tool, server crash, timeout) resolve with `isError`; only an abort rejects. */
  call(alias: string, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpCallResult>;
  /** Returns the clients to the cache (idempotent). */
  release(): Promise<void>;
}

export interface McpOpenContext extends McpSpawnContext {
  signal: AbortSignal;
}

export interface McpCacheStats {
  entries: number;
  /** Sum of holders across entries (an entry held by two runs counts 2). */
  in_use: number;
  /** Entries nobody holds. */
  idle: number;
}

interface Entry {
  key: string;
  server: string;
  conn: McpConnection;
  tools: Tool[];
  refs: number;
  /** When the last holder released it (Date.now()); the idle limit counts from here. */
  idleSince: number;
  /** Why it is unusable (evicted); null while healthy. */
  dead: string | null;
}

/**
 * The MCP client half (the SDK's client, its schemas and undici's fetch), required at the first connect instead of
 * imported: about 0.2 s of start and 8 MB of heap that a process whose runs name no MCP server never uses
 * (bench/server-start). McpError and ErrorCode come through it too, so nothing here loads the SDK before then.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = (): typeof import('./mcp-connection') => require('./mcp-connection') as typeof import('./mcp-connection');

const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const CONNECT_TIMEOUT_MS = 30_000;

/** Cache key: the tenant, the server's full spec (its approval policy aside) and where it runs. Hashed: specs hold secrets. */
function cacheKey(tenantId: string, spec: McpServerSpec, ctx: McpSpawnContext): string {
  const { approval_policy: _policy, ...connection } = spec;
  void _policy;
  const where = connection.url !== undefined ? null : { workspace: ctx.workspace };
  return createHash('sha256')
    .update(JSON.stringify([tenantId, canonical(connection), where]))
    .digest('hex');
}

const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;

const toMcpTool = (server: string, policy: McpApprovalPolicy, t: Tool): McpTool => ({
  alias: mcpToolAlias(server, t.name),
  server,
  name: t.name,
  description: t.description ?? '',
  inputSchema: t.inputSchema as Record<string, unknown>,
  annotations: {
    readOnlyHint: t.annotations?.readOnlyHint,
    idempotentHint: t.annotations?.idempotentHint,
    destructiveHint: t.annotations?.destructiveHint,
  },
  approvalPolicy: policy,
});

/**
 * The worker's MCP clients (docs/design.md §11.2, §11.7): stdio servers run through the command sandbox, Streamable HTTP
 * servers are reached through the outbound policy. Connected clients are cached worker-wide, keyed by tenant + the
 * server's full spec + its workspace (never shared across tenants): LRU over idle entries at
 * GATEWAY_TASK_MCP_CLIENT_CACHE_MAX_ENTRIES (fail-open when every entry is held), idle entries pinged every
 * GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL, dead or wedged servers evicted and killed. Worker-only (McpWorkerModule).
 */
@Injectable()
export class McpClientPool implements OnModuleInit, OnModuleDestroy {
  /** Insertion order is recency: an entry is moved to the end when acquired. */
  private readonly entries = new Map<string, Entry>();
  private readonly connecting = new Map<string, Promise<Entry>>();
  private readonly closing = new Set<Promise<void>>();
  private pingTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly deps: McpConnectDeps;
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly config: AppConfig,
    @Inject(COMMAND_SANDBOX) sandbox: CommandSandbox,
  ) {
    this.secretKey = resolveSecretKey(config);
    this.deps = { sandbox: () => sandbox, tasks: config.tasks, mcp: config.mcp, selfPort: config.server.port, env: readProcessEnv };
  }

  onModuleInit(): void {
    const every = this.config.tasks.mcp.cachePingIntervalMs;
    if (every > 0) {
      this.pingTimer = setInterval(() => void this.pingIdle(), every);
      this.pingTimer.unref();
    }
    // A tenant's cached server does not outlive its run by more than the idle limit (GATEWAY_MCP_IDLE_TIMEOUT).
    const idle = this.config.mcp.idleTimeoutMs;
    if (idle > 0) {
      this.idleTimer = setInterval(() => this.closeIdle(), Math.max(100, Math.min(Math.floor(idle / 4), 10_000)));
      this.idleTimer.unref();
    }
  }

  /** Closes every cached server nobody has held for the idle limit. */
  private closeIdle(): void {
    const limit = this.config.mcp.idleTimeoutMs;
    const now = Date.now();
    for (const entry of [...this.entries.values()]) {
      if (entry.refs === 0 && now - entry.idleSince >= limit) this.evict(entry, `unused for ${Math.round(limit / 1000)} s (GATEWAY_MCP_IDLE_TIMEOUT)`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.idleTimer) clearInterval(this.idleTimer);
    await Promise.allSettled([...this.connecting.values()]);
    for (const entry of [...this.entries.values()]) this.evict(entry, 'the worker is shutting down');
    await Promise.allSettled([...this.closing]);
  }

  /** This worker's cache (`mcp_cache` of its /healthz; the api's system stats gather every worker's). */
  @Liveness('mcp_cache')
  stats(): McpCacheStats {
    let inUse = 0;
    let idle = 0;
    for (const e of this.entries.values()) {
      inUse += e.refs;
      if (e.refs === 0) idle++;
    }
    return { entries: this.entries.size, in_use: inUse, idle };
  }

  /** Connects (or reuses) every server of a run and lists their tools. Fails whole, releasing what it took, naming the server. */
  async open(tenantId: string, stored: McpServerSpec[], ctx: McpOpenContext): Promise<McpToolSet> {
    // Literal env/header values are stored sealed (sealMcpServers): opened here, where they are used, and nowhere else.
    const servers = unsealMcpServers(stored, (sealed) => openSecret(this.secretKey, sealed)) as McpServerSpec[];
    const settled = await Promise.allSettled(servers.map((spec) => this.acquire(tenantId, spec, ctx)));
    const held = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      for (const e of held) this.release(e);
      throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
    return this.toolSet(tenantId, servers, held, ctx);
  }

  /** The probe: an uncached connection, `tools/list`, teardown, all within `timeoutMs`. */
  async probe(spec: McpServerSpec, ctx: McpOpenContext, timeoutMs: number): Promise<Tool[]> {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    const deadline = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error(`MCP server "${spec.name}" did not answer tools/list within ${Math.round(timeoutMs / 1000)} s`));
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    });
    let conn: McpConnection | undefined;
    const work = (async () => {
      conn = await sdk().connectMcpServer(spec, ctx, this.deps, { signal, timeoutMs });
      return sdk().listAllTools(conn.client, { signal, timeout: timeoutMs });
    })();
    // Teardown once the work settles (the abort makes it settle promptly); the answer waits for it, briefly.
    const teardown = work.then(
      () => conn?.close(),
      () => conn?.close(),
    );
    try {
      return await Promise.race([work, deadline]);
    } catch (err) {
      const message = (err as Error).message;
      const diagnostic = conn?.transport === 'stdio' ? conn.diagnostic() : undefined;
      throw new Error(diagnostic && !message.includes(diagnostic) ? `${message} (${diagnostic})` : message, { cause: err });
    } finally {
      await within(teardown, 3000);
    }
  }

  private toolSet(tenantId: string, specs: McpServerSpec[], held: Entry[], ctx: McpOpenContext): McpToolSet {
    const slots = held.map((entry, i) => ({ spec: specs[i], entry }));
    const tools = slots.flatMap(({ spec, entry }) => entry.tools.map((t) => toMcpTool(spec.name, spec.approval_policy ?? 'auto', t)));
    const byAlias = new Map(tools.map((t) => [t.alias, t]));
    let released = false;
    return {
      tools,
      call: async (alias, args, opts) => {
        if (released) return { text: 'MCP tool set was released', isError: true };
        const tool = byAlias.get(alias);
        const slot = tool && slots.find((s) => s.spec.name === tool.server);
        if (!tool || !slot) return { text: `unknown MCP tool ${alias}`, isError: true };
        if (slot.entry.dead) {
          // The server died since it was opened: start it again for this call (reactive eviction).
          try {
            const fresh = await this.acquire(tenantId, slot.spec, { ...ctx, signal: opts.signal });
            this.release(slot.entry);
            slot.entry = fresh;
          } catch (err) {
            return { text: `MCP server "${tool.server}" is not running and could not be restarted: ${(err as Error).message}`, isError: true };
          }
        }
        return this.callTool(slot.entry, tool, args, opts);
      },
      release: async () => {
        if (released) return;
        released = true;
        for (const s of slots) this.release(s.entry);
      },
    };
  }

  private async callTool(entry: Entry, tool: McpTool, args: Record<string, unknown>, opts: McpCallOptions): Promise<McpCallResult> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    try {
      const result = (await entry.conn.client.callTool({ name: tool.name, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: timeoutMs,
        maxTotalTimeout: timeoutMs,
        onprogress: opts.onProgress
          ? (p) => opts.onProgress?.(p.message ?? (p.total !== undefined ? `${p.progress}/${p.total}` : String(p.progress)))
          : undefined,
      })) as CallToolResult;
      return renderToolResult(result);
    } catch (err) {
      if (opts.signal.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('aborted');
      const { McpError, ErrorCode } = sdk();
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        void this.checkAlive(entry);
        return { text: `MCP tool ${tool.alias} did not answer within ${timeoutMs} ms`, isError: true };
      }
      if (entry.dead || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)) {
        this.evict(entry, entry.conn.diagnostic());
        return { text: `MCP tool ${tool.alias} failed: ${entry.dead ?? entry.conn.diagnostic()}`, isError: true };
      }
      if (entry.conn.transport === 'http' && !(err instanceof McpError)) {
        // Transport-level failure (connection refused, reset): the server may be gone; reconnect next time.
        this.evict(entry, `${entry.conn.diagnostic()}: ${(err as Error).message}`);
      }
      return { text: `MCP tool ${tool.alias} failed: ${(err as Error).message}`, isError: true };
    }
  }

  private async acquire(tenantId: string, spec: McpServerSpec, ctx: McpOpenContext): Promise<Entry> {
    const key = cacheKey(tenantId, spec, ctx);
    const cached = this.entries.get(key);
    if (cached && !cached.dead) {
      cached.refs++;
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    let pending = this.connecting.get(key);
    if (!pending) {
      pending = this.connect(key, spec, ctx).finally(() => this.connecting.delete(key));
      this.connecting.set(key, pending);
    }
    const entry = await pending;
    entry.refs++;
    this.trim();
    return entry;
  }

  private async connect(key: string, spec: McpServerSpec, ctx: McpOpenContext): Promise<Entry> {
    const conn = await sdk().connectMcpServer(spec, ctx, this.deps, { signal: ctx.signal, timeoutMs: CONNECT_TIMEOUT_MS });
    let tools: Tool[];
    try {
      tools = await sdk().listAllTools(conn.client, { signal: ctx.signal, timeout: CONNECT_TIMEOUT_MS });
    } catch (err) {
      await conn.close();
      throw new Error(`MCP server "${spec.name}": tools/list failed: ${(err as Error).message}`, { cause: err });
    }
    const entry: Entry = { key, server: spec.name, conn, tools, refs: 0, idleSince: Date.now(), dead: null };
    conn.onClosed(() => this.evict(entry, conn.diagnostic()));
    this.entries.set(key, entry);
    return entry;
  }

  private release(entry: Entry): void {
    entry.refs = Math.max(0, entry.refs - 1);
    if (entry.refs === 0) entry.idleSince = Date.now();
    this.trim();
  }

  /** LRU over idle entries down to the cap; when every entry is held the cache runs over it (fail-open). */
  private trim(): void {
    const max = this.config.tasks.mcp.cacheMaxEntries;
    for (const entry of [...this.entries.values()]) {
      if (this.entries.size <= max) return;
      if (entry.refs === 0) this.evict(entry, 'evicted from the MCP client cache (least recently used)');
    }
  }

  /** Removes an entry and kills its server; calls in flight end with a connection-closed error. */
  private evict(entry: Entry, why: string): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (entry.dead) return;
    entry.dead = why;
    rootLogger().info({ mcp_server: entry.server, transport: entry.conn.transport, reason: why.slice(0, 300) }, 'MCP client evicted');
    const closing = entry.conn
      .close()
      .catch(ignoreFailure('closing an evicted MCP connection', 'the entry is already out of the pool, and each step of the close is best effort'));
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  /** A ping within GATEWAY_TASK_MCP_CLIENT_CACHE_PING_TIMEOUT, or the entry is evicted as wedged. */
  private async checkAlive(entry: Entry): Promise<boolean> {
    if (entry.dead) return false;
    const timeout = this.config.tasks.mcp.cachePingTimeoutMs;
    try {
      await entry.conn.client.ping({ timeout, maxTotalTimeout: timeout });
      return true;
    } catch (err) {
      this.evict(entry, `MCP server "${entry.server}" did not answer a ping within ${timeout} ms: ${(err as Error).message}`);
      return false;
    }
  }

  private async pingIdle(): Promise<void> {
    await Promise.all([...this.entries.values()].filter((e) => e.refs === 0).map((e) => this.checkAlive(e)));
  }
}
