import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ChatSessionsService } from '@modules/chat-sessions';
import type { TaskRunChainsService } from '@modules/tasks';
import { renderError, toDomainError } from '@core/http/error-rendering';
import { createValidationPipe } from '@core/http/validation.pipe';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { rootLogger, scrubSecrets } from '@core/logging/logger';
import { installResources, RUN_EVENTS_TEMPLATE, TRANSCRIPT_TEMPLATE } from './mcp-resources';
import type { McpTool, ToolCaller } from './mcp-tool';

// The MCP SDK's server half, loaded by McpServerService at the first POST /mcp (mcp-server.service.ts).

const INSTRUCTIONS = `Hecate runs tasks (shell, git, file and agent_loop runs on its workers), keeps chat sessions and Agent Chat sessions.
Tasks: create_task, then start_task; follow the run with get_run or list_run_events; cancel_run stops it. A run awaiting_approval waits for resolve_approval (list_pending_approvals shows what waits).
Resources: ${RUN_EVENTS_TEMPLATE} (a run's events) and ${TRANSCRIPT_TEMPLATE} (a chat session's messages).
Everything is scoped to the tenant of your API key.`;

export interface McpServing {
  version: string;
  tools: readonly McpTool[];
  listed: Tool[];
  chains: TaskRunChainsService;
  sessions: ChatSessionsService;
}

/** The server one request talks to, bound to its caller. */
export function mcpServerFor(serving: McpServing, caller: ToolCaller): McpServer {
  const mcp = new McpServer({ name: 'hecate', title: 'Hecate', version: serving.version }, { instructions: INSTRUCTIONS });
  installTools(mcp.server, serving.tools, serving.listed, caller);
  installResources(mcp, serving.chains, serving.sessions, caller);
  return mcp;
}

/** Answers one POST /mcp (a JSON-RPC request, notification or response) with JSON, on a server and transport of its own. */
export async function handleMcpRequest(serving: McpServing, caller: ToolCaller, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const mcp = mcpServerFor(serving, caller);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.once(
    'close',
    () =>
      void mcp.close().catch(ignoreFailure('closing the MCP server of a request', 'the response is gone; server and transport belong to this request only')),
  );
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
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
