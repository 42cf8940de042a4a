import { busChannels } from '@core/bus';
import type { McpServerSpec } from './mcp-server-spec';

/**
 * Names of the probe's bus channels between the api (which waits for an answer) and the worker that runs the MCP server;
 * they are declared in the registry (core/bus/channels.ts). A lost message ends in a timeout, never a wrong answer.
 */
export const mcpChannels = {
  /** api → worker: the entry to probe, after the worker claimed the job. */
  probeSpec: (id: string) => busChannels.mcpProbeSpec.of(id).name,
  /** worker → api: claim, then result. */
  probeWorker: (id: string) => busChannels.mcpProbeWorker.of(id).name,
};

export interface ProbeTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type ProbeWorkerMessage = { kind: 'claim'; worker: string } | { kind: 'result'; tools: ProbeTool[] } | { kind: 'error'; message: string };

export interface ProbeSpecMessage {
  spec: McpServerSpec;
}
