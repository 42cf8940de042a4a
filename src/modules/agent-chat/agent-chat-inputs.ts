import { realpath, stat } from 'node:fs/promises';
import { randomHex } from '@core/context/random-hex';
import { InvalidRequestError } from '@core/http/domain-error';

export const newChatId = (prefix: 'agent_chat' | 'msg' | 'turn' | 'seg'): string => `${prefix}_${randomHex(12)}`;

/** The workspace as an existing directory's real path (an operator-controlled local directory, seed 003). */
export async function canonicalWorkspace(path: string): Promise<string> {
  try {
    const real = await realpath(path);
    if ((await stat(real)).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new InvalidRequestError(`workspace ${JSON.stringify(path)} is not an existing directory`, { details: { field: 'workspace' } });
}
