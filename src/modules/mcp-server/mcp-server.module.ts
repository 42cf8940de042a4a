import { Module } from '@nestjs/common';
import { AgentChatModule } from '@modules/agent-chat';
import { ApprovalsModule } from '@modules/approvals';
import { ChatSessionsModule } from '@modules/chat-sessions';
import { TasksModule } from '@modules/tasks';
import { McpServerService } from './mcp-server.service';

/**
 * The MCP server edge (docs/design.md §5): the product API as MCP tools and resources at `/mcp`. Api role only;
 * nothing imports it (its controller is mounted by ApiModule). The stdio transport is `npm run mcp` (src/main.mcp.ts),
 * a separate process that relays to this endpoint.
 */
@Module({
  imports: [TasksModule, ApprovalsModule, ChatSessionsModule, AgentChatModule],
  providers: [McpServerService],
  exports: [McpServerService],
})
export class McpServerModule {}
