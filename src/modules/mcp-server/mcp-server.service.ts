import { ignoreFailure } from '@core/logging/ignore-failure';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig } from '@core/config/app-config';
import { AgentChatApprovalsService, AgentChatQueueService, AgentChatService } from '@modules/agent-chat';
import { ApprovalsService } from '@modules/approvals';
import { ChatSessionsService } from '@modules/chat-sessions';
import { TaskRunChainsService } from '@modules/tasks';
import { chatTools } from './chat-tools';
import { installResources, RUN_EVENTS_TEMPLATE, TRANSCRIPT_TEMPLATE } from './mcp-resources';
import { installTools, listing, type McpTool, type ToolCaller } from './mcp-tool';
import { taskTools } from './task-tools';

const INSTRUCTIONS = `Hecate runs tasks (shell, git, file and agent_loop runs on its workers), keeps chat sessions and Agent Chat sessions.
Tasks: create_task, then start_task; follow the run with get_run or list_run_events; cancel_run stops it. A run awaiting_approval waits for resolve_approval (list_pending_approvals shows what waits).
Resources: ${RUN_EVENTS_TEMPLATE} (a run's events) and ${TRANSCRIPT_TEMPLATE} (a chat session's messages).
Everything is scoped to the tenant of your API key.`;

/**
 * Hecate as an MCP server over Streamable HTTP, stateless: each POST gets its own server and transport (no
 * session id), so any api pod answers any request. Tools and resources call the services the /hecate/v1 controllers
 * call, with the caller's tenant.
 */
@Injectable()
export class McpServerService {
  private readonly tools: McpTool[];
  private listed: Tool[] | undefined;

  constructor(
    private readonly chains: TaskRunChainsService,
    private readonly sessions: ChatSessionsService,
    private readonly config: AppConfig,
    approvals: ApprovalsService,
    chatApprovals: AgentChatApprovalsService,
    chats: AgentChatService,
    queue: AgentChatQueueService,
  ) {
    this.tools = [...taskTools(chains, approvals, chatApprovals), ...chatTools(sessions, chats, queue)];
  }

  /** The server one request talks to, bound to its caller. */
  server(caller: ToolCaller): McpServer {
    const mcp = new McpServer({ name: 'hecate', title: 'Hecate', version: this.config.version }, { instructions: INSTRUCTIONS });
    this.listed ??= listing(this.tools);
    installTools(mcp.server, this.tools, this.listed, caller);
    installResources(mcp, this.chains, this.sessions, caller);
    return mcp;
  }

  /** Answers one POST /mcp (a JSON-RPC request, notification or response) with JSON. */
  async handle(caller: ToolCaller, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const mcp = this.server(caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once(
      'close',
      () =>
        void mcp.close().catch(ignoreFailure('closing the MCP server of a request', 'the response is gone; server and transport belong to this request only')),
    );
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
