import { resolve } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { resolveSecretKey, sealSecret } from '@core/crypto/secret-box';
import { ExecutorRegistry } from './executor-registry.service';
import { CreateTaskDto, ListTasksQueryDto, toTaskResponse } from './task.dto';
import { TaskEntity } from './task.entity';
import { newId } from './task-ids';
import { TaskRepository } from './task.repository';
import { hasLiteralMcpValues, sealMcpServers } from '@modules/mcp';
import { SAVED_AGENTS, type SavedAgentSource, type SavedAgentSpec } from './saved-agents';
import { ExecutionKindUnavailableError, InvalidTaskError, McpSecretKeyMissingError, TaskNotFoundError } from './tasks.errors';
import { WorkspaceOps } from './workspace/workspace-ops';
import { WorkspaceCaller, WorkspaceService, type WorkspaceSpec } from '@modules/workspaces';

/** docs/api.md §4 `execution_profile` create defaults (explicit fields win). */
const PROFILES: Record<string, Partial<CreateTaskDto>> = {
  repo_local: { execution_kind: 'agent_loop', workspace_mode: 'persistent', working_directory: '.', timeout_ms: 120_000 },
  coding_agent: {
    execution_kind: 'agent_loop',
    workspace_mode: 'persistent',
    working_directory: '.',
    timeout_ms: 300_000,
    system_prompt: 'You are a careful coding agent. Read files before editing them, prefer file_edit for targeted changes, and keep changes minimal.',
  },
};

/** Who creates a task: its workspace rights, and whether Agent Chat creates it for its turns (`tasks.agent_chat`). */
export type TaskCaller = WorkspaceCaller & { agentChat?: boolean; apiKeyId?: string };

/** Task CRUD. Runs are created by RunAttemptsService. */
@Injectable()
export class TasksService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly registry: ExecutorRegistry,
    private readonly workspaces: WorkspaceService,
    private readonly ops: WorkspaceOps,
    @Inject(SAVED_AGENTS) private readonly agents: SavedAgentSource,
    config: AppConfig,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  private readonly secretKey: Buffer | undefined;

  /**
   * `caller.hostPaths`: the operator may point a task at any host directory; API keys only under GATEWAY_WORKSPACE_ROOTS.
   * `id`: the task's id when the caller derives it (a schedule's fire), so a second attempt finds the first one's task.
   */
  async create(tenantId: string, input: CreateTaskDto, caller: TaskCaller, id = newId('task')) {
    const agent = input.agent_id ? await this.agents.resolve(tenantId, input.agent_id, input.agent_version) : null;
    const dto: CreateTaskDto = {
      ...(PROFILES[input.execution_profile ?? ''] ?? {}),
      ...(agent ? stripUndefined(agentDefaults(agent)) : {}),
      ...stripUndefined(input),
    };
    const kind = dto.execution_kind ?? '';
    if (!kind) throw new InvalidTaskError(['execution_kind is required (shell, git, file or agent_loop)']);
    const executor = this.registry.get(kind);
    if (!executor) throw new ExecutionKindUnavailableError(kind, this.registry.kinds());
    // A relative working_directory is relative to the server's working directory.
    const workingDirectory = dto.working_directory ? resolve(dto.working_directory) : '';
    const now = new Date();
    const task: TaskEntity = {
      id,
      tenantId,
      title: dto.title ?? '',
      prompt: dto.prompt ?? '',
      systemPrompt: dto.system_prompt ?? '',
      executionKind: kind,
      executionProfile: dto.execution_profile ?? '',
      shellCommand: dto.shell_command ?? '',
      gitCommand: dto.git_command ?? '',
      filePath: dto.file_path ?? '',
      fileContent: dto.file_content ?? '',
      fileOperation: kind === 'file' ? (dto.file_operation ?? 'write') : (dto.file_operation ?? ''),
      workingDirectory,
      workspaceMode: dto.workspace_mode ?? '',
      repo: dto.repo ?? '',
      baseBranch: dto.base_branch ?? '',
      sandboxAllowedRoot: dto.sandbox_allowed_root ?? '',
      sandboxReadOnly: dto.sandbox_read_only ?? false,
      sandboxNetwork: dto.sandbox_network ?? false,
      priority: dto.priority ?? '',
      timeoutMs: dto.timeout_ms ?? 0,
      budgetMicrosUsd: dto.budget_micros_usd ?? 0,
      requestedProvider: dto.requested_provider ?? '',
      requestedModel: dto.requested_model ?? '',
      mcpServers: dto.mcp_servers ?? [],
      agentId: agent?.id ?? null,
      agentVersion: agent?.version ?? null,
      apiKeyId: caller.apiKeyId ?? null,
      clientRef: dto.client_ref ?? null,
      maxTurns: agent?.maxTurns ?? 0,
      builtinTools: agent?.builtinTools ?? null,
      approvalPolicies: agent?.approvalPolicies ?? null,
      agentChat: caller.agentChat ?? false,
      status: 'not_started',
      latestRunId: null,
      lastError: '',
      createdAt: now,
      updatedAt: now,
      startedAt: null,
      finishedAt: null,
    };
    // docs/api.md §4: only an agent loop uses MCP servers; on another kind they would be stored and never started.
    const kindProblems = [
      ...(kind !== 'agent_loop' && task.mcpServers.length > 0 ? [`mcp_servers: only execution_kind agent_loop uses MCP servers (not ${kind})`] : []),
      ...(kind !== 'agent_loop' && agent ? [`agent_id: only execution_kind agent_loop runs a saved agent (not ${kind})`] : []),
    ];
    const problems = [...kindProblems, ...(await executor.validate(task, caller)), ...(await this.workspaceProblems(task, { hostPaths: caller.hostPaths }))];
    if (problems.length > 0) throw new InvalidTaskError(problems);
    // Literal env/header values are secrets: stored sealed like provider keys (the response redacts them anyway).
    if (hasLiteralMcpValues(task.mcpServers)) {
      const key = this.secretKey;
      if (!key) throw new McpSecretKeyMissingError();
      task.mcpServers = sealMcpServers(task.mcpServers, (plain) => sealSecret(key, plain));
    }
    await this.tasks.insert(task);
    return toTaskResponse(task);
  }

  /** Host directories are checked where they live: on a worker (the api never opens a workspace). */
  private async workspaceProblems(task: TaskEntity, caller: WorkspaceCaller): Promise<string[]> {
    if (!this.workspaces.readsHost(task)) return this.workspaces.problems(task, caller);
    const spec: WorkspaceSpec = {
      id: task.id,
      workspaceMode: task.workspaceMode,
      workingDirectory: task.workingDirectory,
      sandboxAllowedRoot: task.sandboxAllowedRoot,
      repo: task.repo,
      baseBranch: task.baseBranch,
      sandboxNetwork: task.sandboxNetwork,
      filePath: task.filePath,
    };
    const out = await this.ops.run(task.tenantId, 'task.check', { task: spec, caller });
    return out.problems as string[];
  }

  async list(tenantId: string, q: ListTasksQueryDto) {
    const rows = await this.tasks.list(tenantId, {
      status: q.status,
      executionKind: q.execution_kind,
      clientRef: q.client_ref,
      limit: Math.min(q.limit || 50, 200),
    });
    return rows.map(toTaskResponse);
  }

  async get(tenantId: string, id: string) {
    return toTaskResponse(await this.require(tenantId, id));
  }

  async exists(tenantId: string, id: string): Promise<boolean> {
    return (await this.tasks.find(tenantId, id)) !== null;
  }

  async require(tenantId: string, id: string): Promise<TaskEntity> {
    const task = await this.tasks.find(tenantId, id);
    if (!task) throw new TaskNotFoundError(id);
    return task;
  }
}

/** What a saved agent fills in; the request's own fields win. */
function agentDefaults(agent: SavedAgentSpec): Partial<CreateTaskDto> {
  return {
    execution_kind: 'agent_loop',
    system_prompt: agent.systemPrompt || undefined,
    requested_provider: agent.provider || undefined,
    requested_model: agent.model || undefined,
    mcp_servers: agent.mcpServers.length > 0 ? agent.mcpServers : undefined,
    budget_micros_usd: agent.budgetMicrosUsd || undefined,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
