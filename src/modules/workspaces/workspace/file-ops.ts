import { realpath } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { PathEscapeError } from '../workspace-errors';
import { readHead, withWorkspaceFile, writeWorkspaceFile } from './workspace-fs';

/** The largest file the file tools read whole (to edit it and keep its before/after text in a patch). */
export const MAX_EDIT_BYTES = 8 * 1024 * 1024;

export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
}

/**
 * Current text of a resolved workspace file, or null when it does not exist. Opened from the workspace root with no
 * symlink followed (workspace-fs); a file over MAX_EDIT_BYTES is refused after reading at most that much.
 */
export async function readCurrent(root: string, path: string): Promise<string | null> {
  return withWorkspaceFile(root, path, async (file) => {
    const head = await readHead(file, MAX_EDIT_BYTES);
    if (head.truncated)
      throw new FileTooLargeError(`${path} is larger than ${MAX_EDIT_BYTES} bytes (${head.size}); file tools edit text files up to that size`);
    return head.data.toString('utf8');
  });
}

/** Whether a path inside the root goes through a `.git` directory or file (git's configuration, hooks and objects). */
export async function inGitDir(root: string, path: string): Promise<boolean> {
  return relative(await realpath(root), path)
    .split(sep)
    .some((p) => p.toLowerCase() === '.git');
}

/**
 * Writes (or, with null, deletes) a resolved workspace file: opened from the workspace root with no symlink followed,
 * missing directories created owned like their parent. Nothing under `.git` is written: a repository's config and
 * hooks decide what git runs, and the file tools are not a way to make git_exec run a program.
 */
export async function writeCurrent(root: string, path: string, content: string | null): Promise<void> {
  if (content !== null && (await inGitDir(root, path))) throw new PathEscapeError(`${path}: the file tools do not write inside .git (use git commands)`);
  await writeWorkspaceFile(root, path, content);
}
