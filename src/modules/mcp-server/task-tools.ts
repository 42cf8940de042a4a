import { z } from 'zod';
import type { Principal } from '@core/context/request-context';
import type { AgentChatApprovalsService } from '@modules/agent-chat';
import { type ApprovalsService, toApprovalResponse } from '@modules/approvals';
import { CreateTaskDto, ListTasksQueryDto, type TaskRunChainsService } from '@modules/tasks';
import { defineTool, type McpTool } from './mcp-tool';
import { CancelRunArgs, ListPendingApprovalsArgs, ListRunEventsArgs, ResolveApprovalArgs, RunArgs, TaskArgs } from './mcp-tool-args.dto';
import { agentChatApproval, run, runEvent, task, taskApproval } from './mcp-shapes';

/** Who resolved an approval, as the REST route records it. */
const by = (p: Principal): string => (p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind);

const taskId = z.string().describe('the task id (task_…)');
const runId = z.string().describe('the run id (run_…)');
const text = (max: number, what: string) => z.string().max(max).optional().describe(what);

/** The fields of `POST /hecate/v1/tasks` (docs/api.md §4 "Task fields"). */
const createTaskInput = {
  execution_kind: z.string().optional().describe('shell, git, file or agent_loop (required unless execution_profile implies it)'),
  execution_profile: z.enum(['', 'repo_local', 'coding_agent']).optional().describe('defaults for an agent_loop task'),
  title: text(500, 'a short title'),
  prompt: text(200_000, 'what an agent_loop task should do'),
  system_prompt: text(200_000, 'system prompt of an agent_loop task'),
  shell_command: text(100_000, 'the command of a shell task (run with /bin/sh -c)'),
  git_command: text(100_000, 'the git arguments of a git task'),
  file_path: text(4096, 'the file of a file task, relative to the workspace'),
  file_content: z.string().optional().describe('what a file task writes or appends'),
  file_operation: z.enum(['write', 'append', 'delete']).optional(),
  working_directory: text(4096, 'the directory the task works in'),
  workspace_mode: z.enum(['', 'persistent', 'ephemeral', 'in_place']).optional(),
  repo: text(4096, 'a git repository to clone into the workspace'),
  base_branch: text(255, 'the branch to check out'),
  sandbox_allowed_root: text(4096, 'the directory the sandbox may write'),
  sandbox_read_only: z.boolean().optional(),
  sandbox_network: z.boolean().optional().describe('allow network access (may need an approval)'),
  priority: text(32, 'queue priority'),
  timeout_ms: z.number().int().min(0).max(86_400_000).optional(),
  budget_micros_usd: z.number().int().min(0).optional().describe('cost ceiling of the task in micro-dollars'),
  requested_provider: text(255, 'provider of an agent_loop task'),
  requested_model: text(255, 'model of an agent_loop task'),
  mcp_servers: z.array(z.record(z.string(), z.unknown())).optional().describe('MCP servers an agent_loop task may use'),
  agent_id: text(
    200,
    'a saved agent (GET /hecate/v1/agents): an agent_loop task with its model, system prompt, tools, MCP servers, budget and turn cap; fields given here win',
  ),
  agent_version: z.number().int().min(1).optional().describe('a version of agent_id (default: its latest)'),
};

/** Tasks, runs and approvals: the /hecate/v1/tasks routes as tools. */
export function taskTools(chains: TaskRunChainsService, approvals: ApprovalsService, chatApprovals: AgentChatApprovalsService): McpTool[] {
  return [
    defineTool({
      name: 'list_tasks',
      title: 'List tasks',
      description: 'Lists your tasks, newest first, with their status and latest run id.',
      args: ListTasksQueryDto,
      input: {
        status: z.string().optional().describe('only tasks in this status (not_started, queued, running, completed, failed, cancelled, …)'),
        limit: z.number().int().min(0).optional().describe('at most this many (default 50, at most 200)'),
      },
      output: { tasks: z.array(task) },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => ({ tasks: await chains.listTasks(principal.tenantId, a) }),
    }),
    defineTool({
      name: 'create_task',
      title: 'Create a task',
      description:
        'Creates a task (not started: call start_task). A shell task runs shell_command, a git task git_command, a file task writes file_path; an agent_loop task runs a coding agent on prompt with requested_model, or as the saved agent agent_id.',
      args: CreateTaskDto,
      input: createTaskInput,
      output: { task },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async (a, { principal }) => ({ task: await chains.createTask(principal.tenantId, a, { hostPaths: principal.kind !== 'api_key' }) }),
    }),
    defineTool({
      name: 'start_task',
      title: 'Start a task',
      description:
        "Starts the task's next run. The run is queued for a worker, or awaiting_approval when a policy gates it (see list_pending_approvals). Follow it with get_run or list_run_events.",
      args: TaskArgs,
      input: { task_id: taskId },
      output: { run },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: async (a, { principal, origin }) => ({ run: await chains.startTask(principal.tenantId, a.task_id, origin) }),
    }),
    defineTool({
      name: 'get_run',
      title: 'Get a run',
      description: 'A run of a task: its status (queued, awaiting_approval, running, completed, failed, cancelled, timed_out), cost, error and times.',
      args: RunArgs,
      input: { task_id: taskId, run_id: runId },
      output: { run },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => ({ run: await chains.getRun(principal.tenantId, a.task_id, a.run_id) }),
    }),
    defineTool({
      name: 'list_run_events',
      title: 'List run events',
      description: "A page of a run's events in order (run.*, tool.*, approval.*, …). Pass next_after_sequence back as after_sequence for the next page.",
      args: ListRunEventsArgs,
      input: {
        task_id: taskId,
        run_id: runId,
        after_sequence: z.number().int().min(0).optional().describe('only events after this sequence (default 0: from the start)'),
        limit: z.number().int().min(1).max(500).optional().describe('at most this many (default 500)'),
      },
      output: { events: z.array(runEvent), next_after_sequence: z.number() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => {
        const after = a.after_sequence ?? 0;
        const events = await chains.listRunEvents(principal.tenantId, a.task_id, a.run_id, after, a.limit ?? 500);
        return { events, next_after_sequence: events.at(-1)?.sequence ?? after };
      },
    }),
    defineTool({
      name: 'cancel_run',
      title: 'Cancel a run',
      description: 'Cancels a queued, waiting or running run (its pending approvals are cancelled with it). A finished run answers a conflict.',
      args: CancelRunArgs,
      input: { task_id: taskId, run_id: runId, reason: text(4000, 'why (recorded on the run)') },
      output: { run },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: async (a, { principal, origin }) => ({ run: await chains.cancelRun(principal.tenantId, a.task_id, a.run_id, a.reason ?? '', origin) }),
    }),
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
