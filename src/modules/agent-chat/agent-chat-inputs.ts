import { randomHex } from '@core/context/random-hex';
import type { WorkspaceOps } from '@modules/tasks';

export const newChatId = (prefix: 'agent_chat' | 'msg' | 'turn' | 'seg'): string => `${prefix}_${randomHex(12)}`;

/**
 * The workspace as an existing directory's real path (an operator-controlled local directory, seed 003), resolved on a
 * worker: the workspace is where the workers are, never opened by the api.
 */
export async function canonicalWorkspace(ops: WorkspaceOps, tenantId: string, path: string): Promise<string> {
  return String((await ops.run(tenantId, 'workspace.canonical', { path })).path);
}
