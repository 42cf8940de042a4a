import { hostname } from 'node:os';
import { rm } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { AppConfig } from '@core/config/app-config';
import { EventBus } from '@core/bus/event-bus.port';
import { rootLogger } from '@core/logging/logger';
import type { JobContext } from '@core/queue/run-queue.port';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';
import { mcpChannels, ProbeSpecMessage, ProbeWorkerMessage } from './mcp-bus';
import { McpClientPool } from './mcp-client-pool.service';
import { PROBE_TIMEOUT_MS } from './mcp-probe.service';

/** How long a worker waits for the api to hand over the entry after claiming (the api may have given up). */
const SPEC_TIMEOUT_MS = 5_000;

/**
 * Worker side of `POST /hecate/v1/mcp/probe`: claims the probe over the bus, receives the entry, brings the server
 * up uncached in a scratch workspace (the sandbox as for a run), lists its tools within 10 s, tears it down and
 * answers with the tools or the diagnostic.
 */
@Injectable()
export class McpProbeRunner {
  constructor(
    private readonly config: AppConfig,
    private readonly pool: McpClientPool,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async execute(payload: JobPayloads['mcp.probe'], ctx: JobContext): Promise<void> {
    const { probeId } = payload;
    const answer = (m: ProbeWorkerMessage) => this.bus.publish(mcpChannels.probeWorker(probeId), m);
    let received!: (m: ProbeSpecMessage) => void;
    const spec = new Promise<ProbeSpecMessage>((r) => (received = r));
    const unsubscribe = await this.bus.subscribe(mcpChannels.probeSpec(probeId), (_c, m) => received(m as ProbeSpecMessage));
    let timer: NodeJS.Timeout | undefined;
    let message: ProbeSpecMessage | undefined;
    try {
      await answer({ kind: 'claim', worker: `${hostname()}:${process.pid}` });
      message = await Promise.race([spec, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), SPEC_TIMEOUT_MS)))]);
    } finally {
      clearTimeout(timer);
      await unsubscribe();
    }
    if (!message) return; // the api gave up before the claim reached it
    const workspace = await this.sandbox.scratchWorkspace('mcp-probes');
    try {
      const tools = await this.pool.probe(message.spec, { workspace, signal: ctx.signal }, PROBE_TIMEOUT_MS);
      await answer({
        kind: 'result',
        tools: tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          input_schema: t.inputSchema as Record<string, unknown>,
        })),
      });
    } catch (err) {
      rootLogger().info({ probe_id: probeId, mcp_server: message.spec.name, error: (err as Error).message.slice(0, 500) }, 'MCP probe failed');
      await answer({ kind: 'error', message: (err as Error).message });
    } finally {
      await rm(workspace, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}
