import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PathEscapeError } from '../workspace-errors';

const isInside = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * docs/security.md: a path is resolved to the realpath of its deepest existing ancestor plus the not-yet-existing
 * rest, and must stay inside the root. Refuses `..` escapes, symlinks that leave the root (also for
 * targets that do not exist yet under a symlinked folder), prefix siblings (`/ws-evil` for `/ws`), and
 * NUL bytes. Every workspace path of the runtime goes through here.
 */
export async function resolveInside(root: string, requested: string, what = 'path'): Promise<string> {
  if (requested.includes('\0') || root.includes('\0')) throw new PathEscapeError(`${what} contains a NUL byte`);
  if (requested.trim() === '') throw new PathEscapeError(`${what} is empty`);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw new PathEscapeError(`root ${root} does not exist`);
  }
  const lexical = isAbsolute(requested) ? resolve(requested) : resolve(realRoot, requested);
  const rest: string[] = [];
  let probe = lexical;
  for (;;) {
    try {
      const real = await realpath(probe);
      const full = rest.length > 0 ? join(real, ...rest.reverse()) : real;
      if (!isInside(realRoot, full)) throw new PathEscapeError(`${what} ${requested} resolves outside ${root}`);
      return full;
    } catch (err) {
      if (err instanceof PathEscapeError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathEscapeError(`${what} ${requested} cannot be resolved (${code})`);
      const parent = dirname(probe);
      if (parent === probe) throw new PathEscapeError(`${what} ${requested} has no existing ancestor`);
      rest.push(basename(probe));
      probe = parent;
    }
  }
}

/** The relative form of a resolved path inside a root (for display and patch records). */
export async function relativeInside(root: string, resolved: string): Promise<string> {
  // path.relative, not a slice past `root + sep`: a root of `/` has no separator to skip (`/tmp/x` → `tmp/x`).
  const rel = relative(await realpath(root), resolved);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new PathEscapeError(`${resolved} is outside ${root}`);
  return rel === '' ? '.' : rel;
}
