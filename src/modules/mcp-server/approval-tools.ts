import { z } from 'zod';
import type { Principal } from '@core/context/request-context';
import type { AgentChatApprovalsService } from '@modules/agent-chat';
import { type ApprovalsService, toApprovalResponse } from '@modules/approvals';
import type { TaskRunChainsService } from '@modules/tasks';
import { defineTool, type McpTool } from './mcp-tool';
import { ListPendingApprovalsArgs, ResolveApprovalArgs } from './mcp-tool-args.dto';
import { agentChatApproval, taskApproval, taskId, text } from './mcp-shapes';

/** Who resolved an approval, as the REST route records it. */
const by = (p: Principal): string => (p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind);

/** Approvals waiting for a decision (task and Agent Chat ones), and resolving a task approval. */
export function approvalTools(chains: TaskRunChainsService, approvals: ApprovalsService, chatApprovals: AgentChatApprovalsService): McpTool[] {
  return [
    defineTool({
      name: 'list_pending_approvals',
      title: 'List pending approvals',
      description:
        'Approvals waiting for a decision, oldest first: task approvals (a gated command, git call, file write or agent tool call; resolve them with resolve_approval) and Agent Chat approvals of external agents.',
      args: ListPendingApprovalsArgs,
      input: { limit: z.number().int().min(1).max(500).optional().describe('at most this many of each kind (default 100)') },
      output: { task_approvals: z.array(taskApproval), agent_chat_approvals: z.array(agentChatApproval) },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => {
        const limit = a.limit ?? 100;
        const [tasks, chats] = await Promise.all([approvals.listPending(principal.tenantId, limit), chatApprovals.listPending(principal.tenantId, limit)]);
        return { task_approvals: tasks.map(toApprovalResponse), agent_chat_approvals: chats };
      },
    }),
    defineTool({
      name: 'resolve_approval',
      title: 'Resolve a task approval',
      description:
        'Approves or rejects a pending task approval: approve lets the run go on, reject cancels it. An approval that is no longer pending answers a conflict.',
      args: ResolveApprovalArgs,
      input: {
        task_id: taskId,
        approval_id: z.string().describe('the approval id (approval_…)'),
        decision: z.enum(['approve', 'reject']),
        note: text(4000, 'recorded with the decision'),
      },
      output: { approval: taskApproval },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (a, { principal, origin }) => ({
        approval: await chains.resolveApproval(
          principal.tenantId,
          a.task_id,
          a.approval_id,
          { decision: a.decision, note: a.note ?? '', by: by(principal) },
          origin,
        ),
      }),
    }),
  ];
}
