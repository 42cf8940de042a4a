import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { renderError, toDomainError } from '@core/http/error-rendering';
import { createValidationPipe } from '@core/http/validation.pipe';
import { rootLogger, scrubSecrets } from '@core/logging/logger';

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

const pipe = createValidationPipe();

/** A tool's answer: the structured result, and the same JSON as text for clients that read only `content`. */
const ok = (structured: Record<string, unknown>): CallToolResult => ({
  structuredContent: structured,
  content: [{ type: 'text', text: JSON.stringify(structured) }],
});

/**
 * A tool error (`isError: true`) whose text is the /hecate/v1 error envelope: the API contract's `type`, message, user message,
 * operator action and the request id. Unclassified failures are logged and answer an opaque `gateway_error`, as HTTP does.
 */
function failed(err: unknown, tool: string, { origin }: ToolCaller): CallToolResult {
  const { domain, internal } = toDomainError(err);
  if (internal) {
    const e = err instanceof Error ? err : new Error(String(err));
    rootLogger().error(
      { request_id: origin.requestId, trace_id: origin.traceId, tool, err: { message: scrubSecrets(e.message), stack: scrubSecrets(e.stack ?? '') } },
      'mcp tool failed',
    );
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(renderError('hecate', domain, origin.requestId, origin.traceId)) }] };
}

/**
 * Installs tools/list and tools/call on a server. Not McpServer.registerTool: it validates arguments against the zod
 * schema before the handler and answers its own message without Hecate's error `type`; here every argument goes
 * through the route's DTO instead, and every failure answers the error envelope.
 */
export function installTools(server: Server, tools: readonly McpTool[], listed: Tool[], caller: ToolCaller): void {
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.registerCapabilities({ tools: {} });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    // A protocol error (MCP: unknown tools are not tool errors); plain, for the reason given in mcp-resources.ts.
    if (!tool) throw Object.assign(new Error(`Tool ${request.params.name} not found`), { code: ErrorCode.InvalidParams });
    try {
      const args = (await pipe.transform(request.params.arguments ?? {}, { type: 'body', metatype: tool.args })) as object;
      return ok(await tool.run(args, caller));
    } catch (err) {
      return failed(err, tool.name, caller);
    }
  });
}
