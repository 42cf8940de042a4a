import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { RunQueue } from '@core/queue/run-queue.port';
import { mcpChannels, ProbeTool, ProbeWorkerMessage } from './mcp-bus';
import { AppConfig } from '@core/config/app-config';
import { McpCommandNotAllowedError, McpProbeFailedError, McpSecretNotAllowedError, McpWorkerUnavailableError } from './mcp.errors';
import { secretRefusals, unlistedStdioServers } from './mcp-policy';
import { mcpServerEntryProblems, McpServerSpec } from './mcp-server-spec';
import { within } from '@core/async/within';

/** The probe's deadline for spawn (or connect) → initialize → tools/list (seed 003: 10 s). */
export const PROBE_TIMEOUT_MS = 10_000;
/** How long the api waits for a worker to take the probe job. */
const CLAIM_TIMEOUT_MS = 10_000;
/** After the claim: the worker's deadline, its teardown and the bus round trip. */
const ANSWER_TIMEOUT_MS = PROBE_TIMEOUT_MS + 5_000;

/**
 * `POST /hecate/v1/mcp/probe`, api side (DESIGN §11.2: the api never spawns a server). Validates the entry, enqueues
 * an `mcp.probe` job that carries only ids, hands the entry to the worker that claims it over the bus, and waits for
 * the tool list or the diagnostic.
 */
@Injectable()
export class McpProbeService {
  constructor(
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly config: AppConfig,
  ) {}

  /** `caller.operator`: the operator token or local operator may start any command (sandboxed); API keys only allowlisted ones. */
  async probe(tenantId: string, body: Record<string, unknown>, caller: { operator: boolean } = { operator: false }): Promise<{ tools: ProbeTool[] }> {
    const entry = { ...body, name: body.name ?? 'probe' };
    const refused = secretRefusals([entry], this.config.mcp);
    if (refused.length > 0) throw new McpSecretNotAllowedError(refused);
    if (!caller.operator && unlistedStdioServers([entry], this.config.mcp).length > 0) throw new McpCommandNotAllowedError([String(entry.name)]);
    const problems = mcpServerEntryProblems(entry, 'mcp_server');
    if (problems.length > 0) throw new McpProbeFailedError(problems.join('; '), problems);
    const spec = entry as unknown as McpServerSpec;
    const probeId = randomUUID();
    let onClaim!: (claimed: true) => void;
    let settle!: (m: ProbeWorkerMessage) => void;
    const claimed = new Promise<true>((r) => (onClaim = r));
    const answered = new Promise<ProbeWorkerMessage>((r) => (settle = r));
    let taken = false;
    const unsubscribe = await this.bus.subscribe(mcpChannels.probeWorker(probeId), (_channel, raw) => {
      const message = raw as ProbeWorkerMessage;
      if (message.kind === 'claim') {
        if (taken) return;
        taken = true;
        onClaim(true);
        void this.bus.publish(mcpChannels.probeSpec(probeId), { spec });
      } else settle(message);
    });
    try {
      await this.queue.enqueue('mcp.probe', { probeId, tenantId }, { jobId: `mcp-probe-${probeId}` });
      if (!(await within(claimed, CLAIM_TIMEOUT_MS))) throw new McpWorkerUnavailableError(`no worker took the MCP probe within ${CLAIM_TIMEOUT_MS / 1000} s`);
      const answer = await within(answered, ANSWER_TIMEOUT_MS);
      if (!answer) throw new McpWorkerUnavailableError('the worker running the MCP probe did not answer');
      if (answer.kind === 'error') throw new McpProbeFailedError(answer.message);
      if (answer.kind !== 'result') throw new McpWorkerUnavailableError('unexpected answer from the worker running the MCP probe');
      return { tools: answer.tools };
    } finally {
      await unsubscribe();
    }
  }
}
