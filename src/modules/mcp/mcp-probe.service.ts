import { Injectable } from '@nestjs/common';
import { noWorkerAnswered, WorkerRequests } from '@core/lease';
import type { ProbeSpecMessage, ProbeTool } from './mcp-bus';
import { AppConfig } from '@core/config/app-config';
import { McpCommandNotAllowedError, McpProbeFailedError, McpSecretNotAllowedError } from './mcp.errors';
import { secretRefusals, unlistedStdioServers } from './mcp-policy';
import { mcpServerEntryProblems, McpServerSpec } from './mcp-server-spec';

/** The worker request of a probe; its row stores the server's name only (the entry may hold literal secrets). */
export const MCP_PROBE_REQUEST = 'mcp.probe';

/** The probe's deadline for spawn (or connect) → initialize → tools/list (docs/api.md §4: 10 s). */
export const PROBE_TIMEOUT_MS = 10_000;
/** How long the api waits for a worker to take the probe job. */
const CLAIM_TIMEOUT_MS = 10_000;
/** After the claim: the worker's deadline, its teardown and the bus round trip. */
const ANSWER_TIMEOUT_MS = PROBE_TIMEOUT_MS + 5_000;

/**
 * `POST /hecate/v1/mcp/probe`, api side (docs/design.md §11: the api never spawns a server). Validates the entry and asks a
 * worker (an `mcp.probe` worker request); the entry goes to the worker holding the request over the bus, never into
 * a row or a job, and the api waits for the tool list or the diagnostic.
 */
@Injectable()
export class McpProbeService {
  constructor(
    private readonly requests: WorkerRequests,
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
    const input: ProbeSpecMessage = { spec };
    const answer = await this.requests.ask(
      tenantId,
      MCP_PROBE_REQUEST,
      { server: spec.name },
      {
        claimMs: CLAIM_TIMEOUT_MS,
        waitMs: CLAIM_TIMEOUT_MS + ANSWER_TIMEOUT_MS,
        input: { ...input },
        noWorker: (taken) =>
          noWorkerAnswered(taken ? 'the worker running the MCP probe did not answer' : `no worker took the MCP probe within ${CLAIM_TIMEOUT_MS / 1000} s`, {
            userMessage: 'A backing service is unavailable; nothing was changed.',
          }),
      },
    );
    return { tools: answer.tools as ProbeTool[] };
  }
}
