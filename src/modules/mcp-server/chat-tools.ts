import { z } from 'zod';
import { InvalidRequestError } from '@core/http/domain-error';
import { type AgentChatQueueService, type AgentChatService, toActiveTurnView } from '@modules/agent-chat';
import type { ChatSessionsService } from '@modules/chat-sessions';
import { defineTool, type McpTool } from './mcp-tool';
import { GetChatSessionArgs, ListChatSessionsArgs, SendAgentChatMessageArgs } from './mcp-tool-args.dto';
import { agentChatMessage, agentChatQueueItem, agentChatTurn, chatSession, chatSessionWithMessages } from './mcp-shapes';

const sessionId = z.string().describe('the session id');

/** Chat sessions (the `/v1` conversation store, docs/api.md §1) and Agent Chat turns as tools. */
export function chatTools(sessions: ChatSessionsService, chats: AgentChatService, queue: AgentChatQueueService): McpTool[] {
  return [
    defineTool({
      name: 'list_chat_sessions',
      title: 'List chat sessions',
      description:
        'Lists the chat sessions recorded from /v1/chat/completions calls with a session_id (and created with the chat sessions API), newest first, one per conversation.',
      args: ListChatSessionsArgs,
      input: {
        include_snapshots: z.boolean().optional().describe('also list the pre-compression snapshots of compressed conversations'),
        limit: z.number().int().min(1).max(1000).optional(),
        cursor: z.string().optional().describe('next_cursor of the previous page'),
      },
      output: { sessions: z.array(chatSession), has_more: z.boolean(), next_cursor: z.string().nullable() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => {
        const page = await sessions.list(principal.tenantId, { includeSnapshots: a.include_snapshots ?? false, limit: a.limit, cursor: a.cursor });
        return { sessions: page.data, has_more: page.has_more, next_cursor: page.next_cursor };
      },
    }),
    defineTool({
      name: 'get_chat_session',
      title: 'Get a chat session',
      description:
        'A chat session with its messages (the active path from the root to the current leaf, or every branch with view: tree) and its provider calls.',
      args: GetChatSessionArgs,
      input: { session_id: sessionId, view: z.enum(['active_path', 'tree']).optional() },
      output: { session: chatSessionWithMessages },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => ({ session: await sessions.get(principal.tenantId, a.session_id, a.view) }),
    }),
    defineTool({
      name: 'send_agent_chat_message',
      title: 'Send an Agent Chat message',
      description:
        "Posts a user message to an Agent Chat session and runs the turn (a model answer, or an agent with tools in the session's workspace). Waits for the turn to end and answers the reply; with wait: false it answers at once with the turn's ids and status. A busy session refuses the message unless on_busy says interrupt or enqueue.",
      args: SendAgentChatMessageArgs,
      input: {
        session_id: sessionId,
        content: z.string().max(1_000_000).describe('the message'),
        runtime_kind: z.string().optional().describe("model or agent (defaults to the session's)"),
        provider: z.string().max(200).optional(),
        model: z.string().max(400).optional(),
        system_prompt: z.string().max(200_000).optional(),
        workspace: z.string().max(4096).optional().describe('the directory an agent turn works in'),
        wait: z.boolean().optional().describe('false: answer at once instead of when the turn ends (default true)'),
        on_busy: z
          .enum(['reject', 'interrupt', 'enqueue'])
          .optional()
          .describe('while a turn runs: refuse (default), stop it and run this, or queue this next'),
      },
      output: {
        session_id: z.string(),
        turn: agentChatTurn.nullable().describe('the turn this message started (null when it was queued)'),
        reply: agentChatMessage.nullable().describe("the turn's assistant message once the turn ended (null with wait: false)"),
        queued: agentChatQueueItem.nullable().describe('the queued item (on_busy: enqueue while a turn runs)'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async ({ session_id, ...message }, { principal, origin }) => {
        if (message.stream) {
          throw new InvalidRequestError('stream is not offered over MCP: the tool answers when the turn ends, or at once with wait: false', {
            details: { param: 'stream' },
          });
        }
        const started = await queue.startOrQueue(principal, origin, session_id, message);
        if ('queued' in started) return { session_id, turn: null, reply: null, queued: started.queued };
        if (message.wait === false) return { session_id, turn: toActiveTurnView(started.turn), reply: null, queued: null };
        // As `POST …/messages` without `wait: false`: until the turn leaves queued/running, bounded by the server's wait timeout.
        const turn = (await chats.waitForTurn(started.turn.id, session_id)) ?? started.turn;
        const reply = (await chats.view(principal.tenantId, session_id)).messages.find((m) => m.id === turn.assistant_message_id) ?? null;
        return { session_id, turn: toActiveTurnView(turn), reply, queued: null };
      },
    }),
  ];
}
