import type { ApprovalPolicyName } from '@core/config/groups/tasks.env';
import type { ApprovalKind } from './approval-rows';

export interface PreExecutionGate {
  kind: ApprovalKind;
  /** The policies that made the gate apply (for `policy_reason`). */
  policies: ApprovalPolicyName[];
}

/** Which policy (GATEWAY_TASK_APPROVAL_POLICIES) gates each execution kind before it runs. */
const KIND_POLICY: Record<string, { policy: ApprovalPolicyName; kind: ApprovalKind }> = {
  shell: { policy: 'shell_exec', kind: 'shell_command' },
  git: { policy: 'git_exec', kind: 'git_exec' },
  file: { policy: 'file_write', kind: 'file_write' },
};

/** Agent tool → the policy that gates it (used by agent_loop mid-loop gates). */
const TOOL_POLICY: Record<string, ApprovalPolicyName> = {
  shell_exec: 'shell_exec',
  terminal_open: 'shell_exec',
  git_exec: 'git_exec',
  git_status: 'git_exec',
  git_diff: 'git_exec',
  file_write: 'file_write',
  file_edit: 'file_write',
  apply_patch: 'file_write',
  http_request: 'network_egress',
  web_search: 'network_egress',
  read_file: 'read_file',
  grep: 'read_file',
  glob: 'read_file',
  list_dir: 'read_file',
};

/**
 * The gate a run of this kind needs before it starts, or null. A shell/git/file gate takes precedence;
 * `sandbox_network=true` alone gates as `network_egress`.
 */
export function preExecutionGate(active: readonly ApprovalPolicyName[], executionKind: string, sandboxNetwork: boolean): PreExecutionGate | null {
  const policies: ApprovalPolicyName[] = [];
  const byKind = KIND_POLICY[executionKind];
  if (byKind && active.includes(byKind.policy)) policies.push(byKind.policy);
  const network = sandboxNetwork && executionKind !== 'agent_loop' && active.includes('network_egress');
  if (network) policies.push('network_egress');
  if (policies.length === 0) return null;
  return { kind: byKind && policies[0] === byKind.policy ? byKind.kind : 'network_egress', policies };
}

/** Whether an agent tool call needs an approval under the active policies. */
export function toolRequiresApproval(active: readonly ApprovalPolicyName[], toolName: string): boolean {
  const policy = TOOL_POLICY[toolName];
  return policy !== undefined && active.includes(policy);
}
