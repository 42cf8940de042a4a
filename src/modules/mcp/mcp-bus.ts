import type { McpServerSpec } from './mcp-server-spec';

/**
 * Bus channels between the api (which waits for an answer) and the workers (which run MCP servers). The bus is a
 * doorbell (DESIGN §4.3): a lost message ends in a timeout, never a wrong answer.
 */
export const mcpChannels = {
  cacheRequest: 'mcp.cache.request',
  cacheReply: (id: string) => `mcp.cache.reply.${id}`,
};

export interface ProbeTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** The probe's input, handed by the api to the worker holding the request (core/lease WorkerRequests input). */
export interface ProbeSpecMessage {
  spec: McpServerSpec;
}

export interface CacheReplyMessage {
  worker: string;
  entries: number;
  in_use: number;
  idle: number;
}
