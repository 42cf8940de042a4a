import { randomHex } from '@core/context/random-hex';
import type { Principal } from '@core/context/request-context';
import type { WorkspaceOps } from '@modules/tasks';

export const newChatId = (prefix: 'agent_chat' | 'msg' | 'turn' | 'seg'): string => `${prefix}_${randomHex(12)}`;

/**
 * The workspace as an existing directory's real path (an operator-controlled local directory, docs/api.md §4), resolved on a
 * worker: the workspace is where the workers are, never opened by the api. API keys only reach directories under
 * GATEWAY_WORKSPACE_ROOTS (the rule tasks follow); the operator any.
 */
export async function canonicalWorkspace(ops: WorkspaceOps, p: Principal, path: string): Promise<string> {
  return String((await ops.run(p.tenantId, 'workspace.canonical', { path, host_paths: p.kind !== 'api_key' })).path);
}
