import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { EventEnvelope } from '@contracts/events';
import { renderError, toDomainError } from '@core/http/error-rendering';
import type { ChatSessionsService } from '@modules/chat-sessions';
import type { TaskRunChainsService } from '@modules/tasks';
import type { ToolCaller } from './mcp-tool';

export const RUN_EVENTS_TEMPLATE = 'hecate://tasks/{task_id}/runs/{run_id}/events';
export const TRANSCRIPT_TEMPLATE = 'hecate://chat-sessions/{session_id}/transcript';

/** The most events one read of a run's events returns; list_run_events pages past it. */
const MAX_RUN_EVENTS = 5000;
const PAGE = 500;
/** JSON-RPC code MCP gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

const one = (v: Variables[string]): string => (Array.isArray(v) ? (v[0] ?? '') : v);

/**
 * A failed read as a JSON-RPC error carrying the /hecate/v1 error envelope (its `type`) in `data`. A plain Error with
 * `code` and `data` (the protocol layer sends those), not McpError, whose message would carry its "MCP error N:" prefix
 * on the wire and get a second one in the client.
 */
function readError(err: unknown, { origin }: ToolCaller): Error {
  const { domain } = toDomainError(err);
  const code = domain.status === 404 ? RESOURCE_NOT_FOUND : domain.status === 400 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return Object.assign(new Error(domain.message), { code, data: renderError('hecate', domain, origin.requestId, origin.traceId) });
}

async function json(uri: URL, caller: ToolCaller, read: () => Promise<unknown>): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await read()) }] };
  } catch (err) {
    throw readError(err, caller);
  }
}

/** Resource templates: a run's events and a chat session's transcript, read with the caller's tenant. */
export function installResources(mcp: McpServer, chains: TaskRunChainsService, sessions: ChatSessionsService, caller: ToolCaller): void {
  const tenantId = caller.principal.tenantId;
  mcp.registerResource(
    'run_events',
    new ResourceTemplate(RUN_EVENTS_TEMPLATE, { list: undefined }),
    {
      title: 'Run events',
      description: `The events of a run in order (at most ${MAX_RUN_EVENTS}; list_run_events pages past them).`,
      mimeType: 'application/json',
    },
    (uri, v) =>
      json(uri, caller, async () => {
        const [taskId, runId] = [one(v.task_id), one(v.run_id)];
        const events: EventEnvelope[] = [];
        for (let after = 0; events.length < MAX_RUN_EVENTS;) {
          const page = await chains.listRunEvents(tenantId, taskId, runId, after, PAGE);
          events.push(...page);
          if (page.length < PAGE) return { task_id: taskId, run_id: runId, events, truncated: false };
          after = page[page.length - 1].sequence;
        }
        return { task_id: taskId, run_id: runId, events, truncated: true, next_after_sequence: events[events.length - 1].sequence };
      }),
  );
  mcp.registerResource(
    'chat_session_transcript',
    new ResourceTemplate(TRANSCRIPT_TEMPLATE, { list: undefined }),
    { title: 'Chat session transcript', description: 'The messages of a chat session, from the root to its active leaf.', mimeType: 'application/json' },
    (uri, v) =>
      json(uri, caller, async () => {
        const session = await sessions.get(tenantId, one(v.session_id), 'active_path');
        return { session_id: session.id, title: session.title, messages: session.messages };
      }),
  );
}
