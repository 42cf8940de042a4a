import { chown, lstat, mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { openNoFollow } from '../workspace/path-resolver';

/** Current text of a resolved file, or null when it does not exist. */
export async function readCurrent(path: string): Promise<string | null> {
  try {
    const st = await lstat(path);
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTFILE' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const handle = await openNoFollow(path, 'r');
  try {
    return (await readFile(handle)).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Writes (or, with null, deletes) a resolved file without following a symlink in its last component. */
export async function writeCurrent(path: string, content: string | null): Promise<void> {
  if (content === null) {
    try {
      await unlink(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return;
  }
  const owner = await mkdirOwned(dirname(path));
  const handle = await openNoFollow(path, 'w');
  try {
    await handle.writeFile(content);
    if (owner) await handle.chown(owner.uid, owner.gid);
  } finally {
    await handle.close();
  }
}

/**
 * Creates `dir` (and missing parents) owned like the deepest directory that already exists: files the worker (root)
 * writes into a workspace stay writable by the unprivileged uid the workspace's commands run as. Returns that
 * owner when the worker is root, else null.
 */
async function mkdirOwned(dir: string): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) {
    await mkdir(dir, { recursive: true });
    return null;
  }
  const missing: string[] = [];
  let probe = dir;
  let owner: { uid: number; gid: number } | null = null;
  for (;;) {
    try {
      const st = await stat(probe);
      owner = { uid: st.uid, gid: st.gid };
      break;
    } catch {
      const parent = dirname(probe);
      if (parent === probe) break;
      missing.push(probe);
      probe = parent;
    }
  }
  await mkdir(dir, { recursive: true });
  if (owner) for (const created of missing) await chown(created, owner.uid, owner.gid);
  return owner;
}
