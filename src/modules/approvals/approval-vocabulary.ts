/**
 * The vocabulary of an External Agent turn's approvals, which the session stream's approval frames use for every
 * runtime (docs/agent-chat-approvals.md): statuses, the `path` that decided a request, the scopes an operator can
 * answer with, the normalized tool kinds, and how a decision becomes one of the ACP options the agent offered.
 */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'timed_out' | 'cancelled';
export const APPROVAL_STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'timed_out', 'cancelled'];
export type ApprovalPath = 'operator' | 'grant' | 'default_mode' | 'timeout' | 'request_cancelled' | 'startup_reconcile';
export type ApprovalScope = 'once' | 'session' | 'workspace_tool' | 'adapter_tool';
export const SCOPE_CHOICES: readonly ApprovalScope[] = ['once', 'session', 'workspace_tool', 'adapter_tool'];
/** Scopes a grant can have (`once` leaves none), most specific first: the order grants match in. */
export const GRANT_SCOPES: readonly ApprovalScope[] = ['session', 'workspace_tool', 'adapter_tool'];
export type Decision = 'approve' | 'deny';
export type ToolKind = 'file_write' | 'file_read' | 'shell_exec' | 'network' | 'file_move' | 'file_delete' | 'search' | 'think' | 'mcp' | 'other';
export const TOOL_KINDS: readonly ToolKind[] = [
  'file_write',
  'file_read',
  'shell_exec',
  'network',
  'file_move',
  'file_delete',
  'search',
  'think',
  'mcp',
  'other',
];

/** ACP v1 `ToolKind` → Hecate's. */
const FROM_ACP: Record<string, ToolKind> = {
  read: 'file_read',
  edit: 'file_write',
  delete: 'file_delete',
  move: 'file_move',
  search: 'search',
  execute: 'shell_exec',
  think: 'think',
  fetch: 'network',
};

/**
 * A permission request's tool kind: an MCP tool (Claude Code and Codex name them `mcp__<server>__<tool>`, in the title
 * or the adapter's `_meta`) is `mcp` whatever its ACP kind; otherwise the ACP kind mapped, else `other`.
 */
export function toolKindOf(toolCall: { kind?: string | null; title?: string | null; _meta?: unknown }): ToolKind {
  const names = [toolCall.title ?? '', ...metaToolNames(toolCall._meta)];
  if (names.some((n) => /^mcp__|^mcp:/i.test(n.trim()))) return 'mcp';
  return FROM_ACP[toolCall.kind ?? ''] ?? 'other';
}

function metaToolNames(meta: unknown): string[] {
  if (!meta || typeof meta !== 'object') return [];
  const out: string[] = [];
  for (const v of Object.values(meta as Record<string, unknown>)) {
    if (v && typeof v === 'object' && typeof (v as { toolName?: unknown }).toolName === 'string') out.push((v as { toolName: string }).toolName);
  }
  return out;
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

/**
 * The option a decision selects: the operator's `selected_option` when it is one the agent offered for that decision
 * (an allow kind to approve, a reject kind to deny); else the once-option of that decision, else its always-option.
 * Null when the agent offered nothing for it (the ACP answer is then `cancelled`).
 */
export function optionFor(options: readonly PermissionOption[], decision: Decision, selected?: string | null): PermissionOption | null {
  const kinds = decision === 'approve' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  if (selected) return options.find((o) => o.optionId === selected && kinds.includes(o.kind)) ?? null;
  for (const kind of kinds) {
    const o = options.find((x) => x.kind === kind);
    if (o) return o;
  }
  return null;
}

export const statusOf = (decision: Decision): 'approved' | 'denied' => (decision === 'approve' ? 'approved' : 'denied');

/** A Hecate Agent tool → the kind its approval shows (by the policy that gates it: GATEWAY_TASK_APPROVAL_POLICIES). */
const FROM_AGENT_TOOL: Record<string, ToolKind> = {
  shell_exec: 'shell_exec',
  terminal_open: 'shell_exec',
  git_exec: 'shell_exec',
  git_status: 'shell_exec',
  git_diff: 'shell_exec',
  file_write: 'file_write',
  file_edit: 'file_write',
  apply_patch: 'file_write',
  http_request: 'network',
  web_search: 'network',
  read_file: 'file_read',
  grep: 'search',
  glob: 'search',
  list_dir: 'file_read',
};

/** A task approval's kind → its tool kind (the pre-execution gates of shell, git and file tasks, and egress). */
const FROM_TASK_KIND: Record<string, ToolKind> = {
  shell_command: 'shell_exec',
  git_exec: 'shell_exec',
  file_write: 'file_write',
  network_egress: 'network',
};

/**
 * A task approval (a Hecate Agent turn's gated tool calls, or a task's pre-execution gate) in the session stream's
 * vocabulary: the tool kind of its first gated call (`mcp__<server>__<tool>` is `mcp`) and the tools it names.
 */
export function taskToolOf(kind: string, details: Record<string, unknown>): { tool_kind: ToolKind; tool_name: string } {
  const calls = Array.isArray(details.tool_calls) ? (details.tool_calls as Array<{ name?: unknown }>) : [];
  const names = [...new Set(calls.map((c) => (typeof c.name === 'string' ? c.name : '')).filter(Boolean))];
  if (names.length === 0) return { tool_kind: FROM_TASK_KIND[kind] ?? 'other', tool_name: kind };
  const first = names[0];
  return { tool_kind: /^mcp__/.test(first) ? 'mcp' : (FROM_AGENT_TOOL[first] ?? 'other'), tool_name: names.join(', ').slice(0, 500) };
}

/** A task approval's status and decision in the session stream's vocabulary (`rejected` is `denied`, `reject` is `deny`). */
export function taskDispositionOf(status: string): { status: ApprovalStatus; decision: Decision | null; path: ApprovalPath | null } {
  switch (status) {
    case 'approved':
      return { status: 'approved', decision: 'approve', path: 'operator' };
    case 'rejected':
      return { status: 'denied', decision: 'deny', path: 'operator' };
    case 'cancelled':
      return { status: 'cancelled', decision: null, path: 'request_cancelled' };
    default:
      return { status: 'pending', decision: null, path: null };
  }
}
