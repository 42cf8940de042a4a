import { rm } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { type WorkerRequestContext, WorkerRequestHandler } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';
import type { ProbeSpecMessage, ProbeTool } from './mcp-bus';
import { McpClientPool } from './mcp-client-pool.service';
import { McpProbeFailedError } from './mcp.errors';
import { MCP_PROBE_REQUEST, PROBE_TIMEOUT_MS } from './mcp-probe.service';

/**
 * Worker side of `POST /hecate/v1/mcp/probe` (a worker request of kind `mcp.probe`): receives the entry from the api
 * over the bus once it holds the request (never stored), brings the server up uncached in a scratch workspace (the
 * sandbox as for a run), lists its tools within 10 s, tears it down and answers with the tools or the diagnostic.
 */
@Injectable()
export class McpProbeRunner {
  constructor(
    private readonly pool: McpClientPool,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
  ) {}

  /** The `mcp.probe` request: its entry is the api's unstored input. */
  @WorkerRequestHandler(MCP_PROBE_REQUEST)
  async handle(_payload: unknown, ctx: WorkerRequestContext): Promise<{ tools: ProbeTool[] }> {
    return { tools: await this.execute(ctx) };
  }

  private async execute(ctx: WorkerRequestContext): Promise<ProbeTool[]> {
    const { spec } = ctx.input as unknown as ProbeSpecMessage;
    const workspace = await this.sandbox.scratchWorkspace('mcp-probes');
    try {
      const tools = await this.pool.probe(spec, { workspace, signal: ctx.signal }, PROBE_TIMEOUT_MS);
      return tools.map((t) => ({
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        input_schema: t.inputSchema as Record<string, unknown>,
      }));
    } catch (err) {
      rootLogger().info({ probe_id: ctx.requestId, mcp_server: spec.name, error: (err as Error).message.slice(0, 500) }, 'MCP probe failed');
      throw new McpProbeFailedError((err as Error).message);
    } finally {
      await rm(workspace, { recursive: true, force: true }).catch((err: unknown) =>
        rootLogger().warn({ probe_id: ctx.requestId, workspace, err: String(err) }, 'MCP probe workspace not removed'),
      );
    }
  }
}
