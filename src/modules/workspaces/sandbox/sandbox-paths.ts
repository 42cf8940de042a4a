import { dirname, join, relative, sep } from 'node:path';
import { installationRoot } from '@core/config/installation';

const inside = (child: string, parent: string): boolean => child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);

/**
 * The server's code (its built `dist/` and `src/`): hidden from every command, unless the command's workspace is the
 * server's checkout itself (the operator pointed a task at it). Its `node_modules` stays readable where a read path
 * mounts it (adapters and MCP servers installed beside the server run from there, read-only).
 */
export function serverCodePaths(workspace: string): string[] {
  const root = installationRoot();
  if (!root || inside(workspace, root)) return [];
  return [join(root, 'dist'), join(root, 'src')];
}

/**
 * `--bind p p` for a writable path, preceded by the directories leading to it inside a hidden tmpfs (`covered`), made
 * 0755 so the unprivileged uid can reach it (bubblewrap would create them 0700, owned by root).
 */
export function writePathArgs(p: string, covered: string[]): string[] {
  const args: string[] = [];
  const root = covered.find((c) => inside(p, c) && c !== p);
  if (root) {
    let d = root;
    for (const part of relative(root, dirname(p)).split(sep).filter(Boolean)) {
      d = join(d, part);
      args.push('--perms', '0755', '--dir', d);
    }
  }
  args.push('--bind', p, p);
  return args;
}
