import type { ApprovalRow, GrantRow } from './approvals.repository';

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** An approval as `GET …/approvals[/{id}]` shows it (seed 003). */
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

/** The session stream's `approval.requested` event (seed 003). */
export const requestedFrame = (a: ApprovalRow) => ({
  type: 'approval.requested',
  approval_id: a.id,
  session_id: a.session_id,
  adapter_id: a.adapter_id,
  tool_kind: a.tool_kind,
  tool_name: a.tool_name,
  scope_choices: a.scope_choices,
  created_at: iso(a.created_at),
  expires_at: iso(a.expires_at),
});

/** The session stream's `approval.resolved` event (seed 003). */
export const resolvedFrame = (a: ApprovalRow) => ({
  type: 'approval.resolved',
  approval_id: a.id,
  session_id: a.session_id,
  status: a.status,
  decision: a.decision,
  scope: a.scope,
  path: a.path,
  selected_option: a.selected_option,
  resolved_at: iso(a.resolved_at),
});
