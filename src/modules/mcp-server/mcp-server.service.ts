import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig } from '@core/config/app-config';
import { AgentChatApprovalsService, AgentChatQueueService, AgentChatService } from '@modules/agent-chat';
import { ApprovalsService } from '@modules/approvals';
import { ChatSessionsService } from '@modules/chat-sessions';
import { TaskRunChainsService } from '@modules/tasks';
import { chatTools } from './chat-tools';
import { listing, type McpTool, type ToolCaller } from './mcp-tool';
import type { McpServing } from './mcp-session';
import { taskTools } from './task-tools';

/**
 * The MCP SDK's server half (./mcp-session), required at the first POST /mcp instead of imported: about 0.2 s of
 * start and 8 MB of heap that a process nobody reaches over MCP never uses (bench/server-start).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const session = (): typeof import('./mcp-session') => require('./mcp-session') as typeof import('./mcp-session');

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

  /** Answers one POST /mcp (a JSON-RPC request, notification or response) with JSON. */
  async handle(caller: ToolCaller, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    this.listed ??= listing(this.tools);
    const serving: McpServing = { version: this.config.version, tools: this.tools, listed: this.listed, chains: this.chains, sessions: this.sessions };
    await session().handleMcpRequest(serving, caller, req, res, body);
  }
}
