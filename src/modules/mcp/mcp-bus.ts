import type { McpServerSpec } from './mcp-server-spec';

/**
 * Bus channels between the api (which waits for an answer) and the workers (which run MCP servers). The bus is a
 * doorbell (DESIGN §4.3): a lost message ends in a timeout, never a wrong answer.
 */
export const mcpChannels = {
  /** api → worker: the entry to probe, after the worker claimed the job. */
  probeSpec: (id: string) => `mcp.probe.${id}.spec`,
  /** worker → api: claim, then result. */
  probeWorker: (id: string) => `mcp.probe.${id}.worker`,
  cacheRequest: 'mcp.cache.request',
  cacheReply: (id: string) => `mcp.cache.reply.${id}`,
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

export interface CacheReplyMessage {
  worker: string;
  entries: number;
  in_use: number;
  idle: number;
}
