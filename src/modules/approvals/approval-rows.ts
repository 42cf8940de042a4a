import type { ApprovalPath, ApprovalScope, ApprovalStatus, Decision, PermissionOption, ToolKind } from './approval-vocabulary';

/**
 * Who asked for an approval (the `runtime` column of `approvals`): a task run's gate, or an External Agent turn's
 * permission request. A new runtime (schedules, webhooks) is one more kind here, with the references it needs.
 */
export type ApprovalRuntime = 'task_run' | 'agent_chat_turn';

/** A task run's approval statuses (the task API's vocabulary: `rejected`, never `denied` or `timed_out`). */
export type TaskApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';
/** The kinds of a task run's gates. */
export type ApprovalKind = 'shell_command' | 'git_exec' | 'file_write' | 'network_egress' | 'agent_loop_tool_call';

/** The columns every approval has, whoever asked. */
interface ApprovalColumns {
  id: string;
  tenant_id: string;
  note: string;
  requested_by: string;
  resolved_by: string;
  created_at: Date;
  resolved_at: Date | null;
}

/** A task run's gate: the exact plan it approves (`details`, hashed into `action_hash`) and the step that waits. */
export interface TaskApprovalRow extends ApprovalColumns {
  runtime: 'task_run';
  task_id: string;
  run_id: string;
  step_id: string | null;
  kind: ApprovalKind;
  status: TaskApprovalStatus;
  reason: string;
  /** What will run, for the reviewer: ≤16 lines (argv, cwd, env keys, sandbox). */
  action_summary: string[];
  details: Record<string, unknown>;
  action_hash: string;
}

/**
 * An External Agent turn's permission request: the ACP options it offered, the scopes an operator may answer with,
 * and how it was settled (`path`), with the grant that decided it or that its decision left.
 */
export interface TurnApprovalRow extends ApprovalColumns {
  runtime: 'agent_chat_turn';
  session_id: string;
  turn_id: string | null;
  adapter_id: string;
  workspace: string;
  tool_call_id: string;
  tool_kind: ToolKind;
  tool_name: string;
  options: PermissionOption[];
  scope_choices: ApprovalScope[];
  status: ApprovalStatus;
  decision: Decision | null;
  scope: ApprovalScope | null;
  path: ApprovalPath | null;
  selected_option: string | null;
  grant_id: string | null;
  /** The LEASE_OWNER of the worker waiting for the decision (null once settled). */
  waiter: string | null;
  expires_at: Date | null;
}

export type ApprovalRow = TaskApprovalRow | TurnApprovalRow;

export interface GrantRow {
  id: string;
  tenant_id: string;
  scope: ApprovalScope;
  decision: 'allow' | 'deny';
  adapter_id: string;
  tool_kind: ToolKind;
  workspace: string | null;
  session_id: string | null;
  approval_id: string | null;
  note: string;
  created_at: Date;
  expires_at: Date | null;
}

/**
 * How a pending approval is settled — by an operator, a grant, the default mode, a timeout, or its request dying —
 * whatever runtime asked (the columns a settlement sets; a runtime leaves out those it has no use for).
 */
export interface Resolution {
  status: Exclude<TaskApprovalStatus | ApprovalStatus, 'pending'>;
  path?: ApprovalPath | null;
  decision?: Decision | null;
  scope?: ApprovalScope | null;
  selected_option?: string | null;
  grant_id?: string | null;
  note?: string;
  resolved_by?: string;
}
