import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal, RequestOrigin } from '@core/context/request-context';

/** Who calls a tool, and the request it came in on (recorded on runs and events like the REST routes record theirs). */
export interface ToolCaller {
  principal: Principal;
  origin: RequestOrigin;
}

/**
 * One tool over the product API. `args` is the class its arguments are validated with — the route's DTO (or a class
 * extending it with the path's ids) through the same pipe as /hecate/v1 — so a bad argument answers the same
 * `invalid_request` (or domain error) a REST client would get. `input` and `output` are what tools/list advertises.
 */
export interface McpTool<A extends object = object> {
  name: string;
  title: string;
  description: string;
  args: new () => A;
  input: z.ZodRawShape;
  output: z.ZodRawShape;
  annotations: ToolAnnotations;
  run(args: A, caller: ToolCaller): Promise<Record<string, unknown>>;
}

/** Typed at the definition, stored untyped in the table. */
export const defineTool = <A extends object>(tool: McpTool<A>): McpTool => tool as unknown as McpTool;

// The JSON Schema dialect and conversion McpServer.registerTool uses (draft-7, input side of inputs, output side of outputs).
const jsonSchema = (shape: z.ZodRawShape, io: 'input' | 'output') => z.toJSONSchema(z.object(shape), { target: 'draft-7', io }) as Tool['inputSchema'];

/** The tools/list entries of a table (computed once per process: the table is static). */
export function listing(tools: readonly McpTool[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: jsonSchema(t.input, 'input'),
    outputSchema: jsonSchema(t.output, 'output'),
    annotations: { title: t.title, ...t.annotations },
  }));
}
