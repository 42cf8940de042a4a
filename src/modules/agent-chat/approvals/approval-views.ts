import {
  taskDispositionOf,
  taskToolOf,
  type ApprovalPath,
  type ApprovalRecord,
  type ApprovalScope,
  type Decision,
  type GrantRow,
  type ToolKind,
  type TurnApprovalRow as ApprovalRow,
  type TurnApprovalStatus as ApprovalStatus,
} from '@modules/approvals';

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** An approval as `GET …/approvals[/{approval_id}]` shows it (docs/api.md §4). */
export const toApprovalView = (a: ApprovalRow) => ({
  id: a.id,
  session_id: a.session_id,
  turn_id: a.turn_id,
  adapter_id: a.adapter_id,
  workspace: a.workspace,
  tool_call_id: a.tool_call_id,
  tool_kind: a.tool_kind,
  tool_name: a.tool_name,
  options: a.options.map((o) => ({ option_id: o.optionId, name: o.name, kind: o.kind })),
  scope_choices: a.scope_choices,
  status: a.status,
  decision: a.decision,
  scope: a.scope,
  path: a.path,
  selected_option: a.selected_option,
  grant_id: a.grant_id,
  note: a.note,
  created_at: iso(a.created_at),
  expires_at: iso(a.expires_at),
  resolved_at: iso(a.resolved_at),
});

export const toGrantView = (g: GrantRow) => ({
  id: g.id,
  scope: g.scope,
  decision: g.decision,
  adapter_id: g.adapter_id,
  tool_kind: g.tool_kind,
  workspace: g.workspace,
  session_id: g.session_id,
  approval_id: g.approval_id,
  note: g.note,
  created_at: iso(g.created_at),
  expires_at: iso(g.expires_at),
});

/**
 * The session stream's `approval.requested` frame (docs/api.md §4), one shape for every runtime: an External Agent's
 * permission request, or the task approval a Hecate Agent turn's run waits on (with `task_id`, `run_id` and the
 * approval's `kind`; no adapter, no expiry, `once` the only scope). The session stream sets `session_id` and `turn_id`.
 */
export type ApprovalRequestedFrame = {
  type: 'approval.requested';
  approval_id: string;
  session_id?: string;
  turn_id?: string;
  task_id: string | null;
  run_id: string | null;
  adapter_id: string | null;
  kind: string | null;
  tool_kind: ToolKind;
  tool_name: string;
  scope_choices: ApprovalScope[];
  created_at: string | null;
  expires_at: string | null;
};

/** The session stream's `approval.resolved` frame (docs/api.md §4): the disposition and the `path` that decided it. */
export type ApprovalResolvedFrame = {
  type: 'approval.resolved';
  approval_id: string;
  session_id?: string;
  turn_id?: string;
  task_id: string | null;
  run_id: string | null;
  kind: string | null;
  status: ApprovalStatus;
  decision: Decision | null;
  scope: ApprovalScope | null;
  path: ApprovalPath | null;
  selected_option: string | null;
  resolved_at: string | null;
};

export const requestedFrame = (a: ApprovalRow): ApprovalRequestedFrame => ({
  type: 'approval.requested',
  approval_id: a.id,
  session_id: a.session_id,
  turn_id: a.turn_id ?? undefined,
  task_id: null,
  run_id: null,
  adapter_id: a.adapter_id,
  kind: null,
  tool_kind: a.tool_kind,
  tool_name: a.tool_name,
  scope_choices: a.scope_choices,
  created_at: iso(a.created_at),
  expires_at: iso(a.expires_at),
});

export const resolvedFrame = (a: ApprovalRow): ApprovalResolvedFrame => ({
  type: 'approval.resolved',
  approval_id: a.id,
  session_id: a.session_id,
  turn_id: a.turn_id ?? undefined,
  task_id: null,
  run_id: null,
  kind: null,
  status: a.status,
  decision: a.decision,
  scope: a.scope,
  path: a.path,
  selected_option: a.selected_option,
  resolved_at: iso(a.resolved_at),
});

export const taskRequestedFrame = (a: ApprovalRecord): ApprovalRequestedFrame => ({
  type: 'approval.requested',
  approval_id: a.id,
  task_id: a.taskId,
  run_id: a.runId,
  adapter_id: null,
  kind: a.kind,
  ...taskToolOf(a.kind, a.details),
  scope_choices: ['once'],
  created_at: iso(a.createdAt),
  expires_at: null,
});

/** Decided by an operator (`POST /hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve`), or cancelled with its run. */
export const taskResolvedFrame = (a: ApprovalRecord): ApprovalResolvedFrame => ({
  type: 'approval.resolved',
  approval_id: a.id,
  task_id: a.taskId,
  run_id: a.runId,
  kind: a.kind,
  ...taskDispositionOf(a.status),
  scope: 'once',
  selected_option: null,
  resolved_at: iso(a.resolvedAt),
});
