import { z } from 'zod';
import type { AgentChatApprovalsService } from '@modules/agent-chat';
import type { ApprovalsService } from '@modules/approvals';
import { CreateTaskDto, ListTasksQueryDto, type TaskRunChainsService } from '@modules/tasks';
import { approvalTools } from './approval-tools';
import { defineTool, type McpTool } from './mcp-tool';
import { TaskArgs } from './mcp-tool-args.dto';
import { run, task, taskId, text } from './mcp-shapes';
import { runTools } from './run-tools';

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
  client_ref: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/)
    .optional()
    .describe("the client's own name for the task, to find it again with list_tasks (client_ref)"),
};

/** Tasks, runs and approvals: the /hecate/v1/tasks routes as tools. */
export function taskTools(chains: TaskRunChainsService, approvals: ApprovalsService, chatApprovals: AgentChatApprovalsService): McpTool[] {
  return [...taskOnlyTools(chains), ...runTools(chains), ...approvalTools(chains, approvals, chatApprovals)];
}

/** Listing, creating and starting tasks. */
function taskOnlyTools(chains: TaskRunChainsService): McpTool[] {
  return [
    defineTool({
      name: 'list_tasks',
      title: 'List tasks',
      description: 'Lists your tasks, newest first, with their status and latest run id.',
      args: ListTasksQueryDto,
      input: {
        status: z.string().optional().describe('only tasks in this status (not_started, queued, running, completed, failed, cancelled, …)'),
        execution_kind: z.string().max(64).optional().describe('only tasks of this execution kind (shell, git, file, agent_loop)'),
        limit: z.number().int().min(0).optional().describe('at most this many (default 50, at most 200)'),
        client_ref: z.string().max(200).optional().describe('only tasks with this client_ref (newest first)'),
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
      run: async (a, { principal }) => ({
        task: await chains.createTask(principal.tenantId, a, { hostPaths: principal.kind !== 'api_key', apiKeyId: principal.apiKeyId }),
      }),
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
  ];
}
