import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

let root: string | null | undefined;

/**
 * This installation's package root: the nearest directory above the running code with a package.json beside a
 * node_modules (dist/ has a package.json of its own, without node_modules). Null when there is none (bundled code).
 */
export function installationRoot(): string | null {
  if (root !== undefined) return root;
  root = null;
  for (let d = __dirname; dirname(d) !== d; d = dirname(d)) {
    if (existsSync(join(d, 'package.json')) && existsSync(join(d, 'node_modules'))) {
      root = d;
      break;
    }
  }
  return root;
}

/**
 * A directory name that is this installation's alone: its folder's name (readable) and a hash of its real path
 * (two checkouts named alike, or one reached through a symlink, still get one name each).
 */
export function installationKey(installRoot: string): string {
  let at = installRoot;
  try {
    at = realpathSync(installRoot);
  } catch {
    // not there (any more): its path as given
  }
  const name =
    basename(at)
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .slice(0, 40) || 'root';
  return `${name}-${createHash('sha256').update(at).digest('hex').slice(0, 12)}`;
}
