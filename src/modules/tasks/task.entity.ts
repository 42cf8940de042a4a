import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { TaskStatus } from './run-status';

@Entity({ name: 'tasks' })
export class TaskEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') title!: string;
  @Column('text') prompt!: string;
  @Column('text', { name: 'system_prompt' }) systemPrompt!: string;
  @Column('text', { name: 'execution_kind' }) executionKind!: string;
  @Column('text', { name: 'execution_profile' }) executionProfile!: string;
  @Column('text', { name: 'shell_command' }) shellCommand!: string;
  @Column('text', { name: 'git_command' }) gitCommand!: string;
  @Column('text', { name: 'file_path' }) filePath!: string;
  @Column('text', { name: 'file_content' }) fileContent!: string;
  @Column('text', { name: 'file_operation' }) fileOperation!: string;
  @Column('text', { name: 'working_directory' }) workingDirectory!: string;
  @Column('text', { name: 'workspace_mode' }) workspaceMode!: string;
  @Column('text') repo!: string;
  @Column('text', { name: 'base_branch' }) baseBranch!: string;
  @Column('text', { name: 'sandbox_allowed_root' }) sandboxAllowedRoot!: string;
  @Column('boolean', { name: 'sandbox_read_only' }) sandboxReadOnly!: boolean;
  @Column('boolean', { name: 'sandbox_network' }) sandboxNetwork!: boolean;
  @Column('text') priority!: string;
  @Column('integer', { name: 'timeout_ms' }) timeoutMs!: number;
  @Column('bigint', { name: 'budget_micros_usd' }) budgetMicrosUsd!: number;
  @Column('text', { name: 'requested_provider' }) requestedProvider!: string;
  @Column('text', { name: 'requested_model' }) requestedModel!: string;
  @Column('jsonb', { name: 'mcp_servers' }) mcpServers!: unknown[];
  /** The saved agent (and its version) the task was created from; null: none. */
  @Column('text', { name: 'agent_id', nullable: true }) agentId!: string | null;
  @Column('integer', { name: 'agent_version', nullable: true }) agentVersion!: number | null;
  /** The API key that created the task (directly, by a schedule or an Agent Chat session); null: the operator. Its spend budgets apply to the task's model calls. */
  @Column('text', { name: 'api_key_id', nullable: true }) apiKeyId!: string | null;
  /** The client's own name for the task (the ACP agent's editor session id); null: none. */
  @Column('text', { name: 'client_ref', nullable: true }) clientRef!: string | null;
  /** Model calls a run may make; 0: GATEWAY_TASK_AGENT_LOOP_MAX_TURNS. */
  @Column('integer', { name: 'max_turns' }) maxTurns!: number;
  /** Built-in tools the agent loop offers; null: all. */
  @Column('jsonb', { name: 'builtin_tools', nullable: true }) builtinTools!: string[] | null;
  /** Approval policies of the loop's built-in tool calls; null: GATEWAY_TASK_APPROVAL_POLICIES. */
  @Column('jsonb', { name: 'approval_policies', nullable: true }) approvalPolicies!: string[] | null;
  /** Created by Agent Chat for its turns: only such a loop takes guidance (docs/design.md §11.5). */
  @Column('boolean', { name: 'agent_chat' }) agentChat!: boolean;
  @Column('text') status!: TaskStatus;
  @Column('text', { name: 'latest_run_id', nullable: true }) latestRunId!: string | null;
  @Column('text', { name: 'last_error' }) lastError!: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt!: Date | null;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt!: Date | null;
}
