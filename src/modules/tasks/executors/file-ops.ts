import { lstat, mkdir, readFile, unlink } from 'node:fs/promises';
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
  await mkdir(dirname(path), { recursive: true });
  const handle = await openNoFollow(path, 'w');
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
