import type { McpServerSpec } from './mcp-server-spec';

export interface ProbeTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** The probe's input, handed by the api to the worker holding the request (core/lease WorkerRequests input). */
export interface ProbeSpecMessage {
  spec: McpServerSpec;
}
