import { randomHex } from '@core/context/random-hex';
import type { Principal } from '@core/context/request-context';
import type { WorkspaceOps } from '@modules/tasks';

export const newChatId = (prefix: 'agent_chat' | 'msg' | 'turn' | 'seg'): string => `${prefix}_${randomHex(12)}`;

/**
 * The workspace as an existing directory's real path (an operator-controlled local directory, seed 003), resolved on a
 * worker: the workspace is where the workers are, never opened by the api. API keys only get one under
 * GATEWAY_WORKSPACE_ROOTS, with one answer for missing and forbidden paths.
 */
export async function canonicalWorkspace(ops: WorkspaceOps, p: Principal, path: string): Promise<string> {
  return String((await ops.run(p.tenantId, 'workspace.canonical', { path, caller: { hostPaths: p.kind !== 'api_key' } })).path);
}
