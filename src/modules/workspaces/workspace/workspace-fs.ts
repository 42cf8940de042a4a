import { constants } from 'node:fs';
import type { Dirent } from 'node:fs';
import { chmod, mkdir, open, readdir, readlink, realpath, symlink, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PathEscapeError } from '../workspace-errors';
import { ignoreFailure } from '@core/logging/ignore-failure';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * docs/security.md, file tools: every file operation in a workspace walks the path one component at a time from an open
 * descriptor of the workspace root. Each step opens `/proc/self/fd/<dir>/<name>` with O_NOFOLLOW (and O_DIRECTORY
 * for directories), so the name is looked up in the directory already held open and a symlink is never followed:
 * a process swapping a directory for a symlink while the tool runs makes the call fail, never leave the workspace.
 * (Node has no openat(2)/openat2(2); the /proc magic link of an open descriptor gives the same resolution.)
 */
const at = (dir: FileHandle, name: string): string => `/proc/self/fd/${dir.fd}/${name}`;

const codeOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** Thrown when an entry is not a regular file (a FIFO, a socket, a directory where a file was asked for). */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTFILE';
}

/** The components of `resolved` below the real root; refuses anything that is not strictly inside. */
async function components(root: string, resolved: string): Promise<{ realRoot: string; parts: string[] }> {
  const realRoot = await realpath(root);
  const rel = relative(realRoot, resolved);
  if (rel === '') return { realRoot, parts: [] };
  const parts = rel.split(sep);
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0'))) throw new PathEscapeError(`${resolved} is outside ${root}`);
  return { realRoot, parts };
}

async function openDir(path: string): Promise<FileHandle> {
  return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
}

const escaped = (what: string) => new PathEscapeError(`${what} is not a directory, or is a symlink (the file tools never follow one); refused`);

/**
 * Opens the directory `parts` below the root, one no-follow step at a time. Missing directories are created when
 * `create` is set (owned like the deepest existing one when the worker is root, so the sandbox uid can write them);
 * otherwise a missing one answers null. The caller closes the handle.
 */
async function walkDirs(realRoot: string, parts: string[], create: boolean): Promise<{ dir: FileHandle; owner: { uid: number; gid: number } } | null> {
  let dir = await open(realRoot, O_RDONLY | O_DIRECTORY);
  try {
    const st = await dir.stat();
    let owner = { uid: st.uid, gid: st.gid };
    for (const name of parts) {
      let next: FileHandle;
      let created = false;
      try {
        next = await openDir(at(dir, name));
      } catch (err) {
        const code = codeOf(err);
        if (code === 'ENOENT' && create) {
          try {
            await mkdir(at(dir, name), 0o755);
            created = true;
          } catch (mkErr) {
            if (codeOf(mkErr) !== 'EEXIST') throw mkErr;
          }
          try {
            next = await openDir(at(dir, name));
          } catch (again) {
            if (codeOf(again) === 'ELOOP' || codeOf(again) === 'ENOTDIR') throw escaped(name);
            throw again;
          }
        } else if (code === 'ENOENT') {
          await dir.close();
          return null;
        } else if (code === 'ELOOP' || code === 'ENOTDIR') {
          throw escaped(name);
        } else {
          throw err;
        }
      }
      await dir.close();
      dir = next;
      if (created && process.getuid?.() === 0) await dir.chown(owner.uid, owner.gid);
      else {
        const s = await dir.stat();
        owner = { uid: s.uid, gid: s.gid };
      }
    }
    return { dir, owner };
  } catch (err) {
    await dir.close().catch(ignoreFailure('closing a workspace directory handle', 'the error rethrown here is the one the caller acts on'));
    throw err;
  }
}

/** Opens a regular file in `dir` without following a symlink and without blocking on a FIFO. */
export async function openFileAt(dir: FileHandle, name: string, flags = O_RDONLY, what = name): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(at(dir, name), flags | O_NOFOLLOW | O_NONBLOCK, 0o644);
  } catch (err) {
    if (codeOf(err) === 'ELOOP') throw new PathEscapeError(`${what} is a symlink; refused`);
    if (codeOf(err) === 'ENXIO') throw new NotRegularFileError(`${what} is not a regular file`);
    throw err;
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw new NotRegularFileError(`${what} is not a regular file`);
  }
  return handle;
}

/** Reads up to `maxBytes` of a handle; `truncated` when the file holds more. */
export async function readHead(handle: FileHandle, maxBytes: number): Promise<{ data: Buffer; size: number; truncated: boolean }> {
  const size = (await handle.stat()).size;
  const buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(size + 1, 1)));
  let got = 0;
  for (;;) {
    if (got === buf.length) break;
    const { bytesRead } = await handle.read(buf, got, buf.length - got, got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  const truncated = got > maxBytes;
  return { data: buf.subarray(0, Math.min(got, maxBytes)), size: Math.max(size, got), truncated };
}

/**
 * Runs `fn` with a regular file of the workspace opened read-only without following any symlink; null when the
 * file (or a directory on its way) does not exist.
 */
export async function withWorkspaceFile<T>(root: string, resolved: string, fn: (file: FileHandle) => Promise<T>): Promise<T | null> {
  const { realRoot, parts } = await components(root, resolved);
  if (parts.length === 0) throw new NotRegularFileError(`${resolved} is not a regular file`);
  const walked = await walkDirs(realRoot, parts.slice(0, -1), false);
  if (!walked) return null;
  try {
    let file: FileHandle;
    try {
      file = await openFileAt(walked.dir, parts[parts.length - 1], O_RDONLY, relative(realRoot, resolved));
    } catch (err) {
      if (codeOf(err) === 'ENOENT') return null;
      throw err;
    }
    try {
      return await fn(file);
    } finally {
      await file.close();
    }
  } finally {
    await walked.dir.close();
  }
}

/** Writes a regular file of the workspace (creating missing directories), or with null deletes it. */
export async function writeWorkspaceFile(root: string, resolved: string, content: string | Buffer | null): Promise<void> {
  const { realRoot, parts } = await components(root, resolved);
  if (parts.length === 0) throw new NotRegularFileError(`${resolved} is not a regular file`);
  const name = parts[parts.length - 1];
  const walked = await walkDirs(realRoot, parts.slice(0, -1), content !== null);
  if (!walked) return;
  try {
    if (content === null) {
      try {
        await unlink(at(walked.dir, name));
      } catch (err) {
        if (codeOf(err) !== 'ENOENT') throw err;
      }
      return;
    }
    const file = await openFileAt(walked.dir, name, O_WRONLY | O_CREAT, relative(realRoot, resolved));
    try {
      await file.truncate(0);
      await file.writeFile(content);
      if (process.getuid?.() === 0) await file.chown(walked.owner.uid, walked.owner.gid);
    } finally {
      await file.close();
    }
  } finally {
    await walked.dir.close();
  }
}

/** The entries of a workspace directory (no symlink followed on the way); null when it does not exist. */
export async function listWorkspaceDir(root: string, resolved: string): Promise<Dirent[] | null> {
  const { realRoot, parts } = await components(root, resolved);
  const walked = await walkDirs(realRoot, parts, false);
  if (!walked) return null;
  try {
    return await readdir(`/proc/self/fd/${walked.dir.fd}`, { withFileTypes: true });
  } finally {
    await walked.dir.close();
  }
}

/**
 * Visits the regular files below a workspace directory (sorted, `.git` skipped, symlinks never followed, each
 * directory opened from its already-open parent). `visit` gets the open parent and the entry's name and relative
 * path; returning true stops the walk. A single file as `resolved` is visited alone.
 */
export async function walkWorkspace(root: string, resolved: string, visit: (dir: FileHandle, name: string, rel: string) => Promise<boolean>): Promise<void> {
  const { realRoot, parts } = await components(root, resolved);
  if (parts.length > 0) {
    const parent = await walkDirs(realRoot, parts.slice(0, -1), false);
    if (!parent) return;
    try {
      const name = parts[parts.length - 1];
      let probe: FileHandle | null = null;
      try {
        probe = await openDir(at(parent.dir, name));
      } catch (err) {
        if (codeOf(err) === 'ENOTDIR') {
          await visit(parent.dir, name, parts.join('/'));
          return;
        }
        if (codeOf(err) === 'ENOENT') return;
        if (codeOf(err) === 'ELOOP') throw escaped(name);
        throw err;
      }
      try {
        await walkFrom(probe, parts.join('/'), visit);
      } finally {
        await probe.close();
      }
    } finally {
      await parent.dir.close();
    }
    return;
  }
  const top = await open(realRoot, O_RDONLY | O_DIRECTORY);
  try {
    await walkFrom(top, '', visit);
  } finally {
    await top.close();
  }
}

async function walkFrom(dir: FileHandle, prefix: string, visit: (dir: FileHandle, name: string, rel: string) => Promise<boolean>): Promise<boolean> {
  let entries: Dirent[];
  try {
    entries = await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
  } catch {
    return false;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name === '.git') continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) {
      let child: FileHandle;
      try {
        child = await openDir(at(dir, e.name));
      } catch {
        continue; // gone, or swapped for a symlink since readdir: not followed
      }
      try {
        if (await walkFrom(child, rel, visit)) return true;
      } finally {
        await child.close();
      }
    } else if (e.isFile() && (await visit(dir, e.name, rel))) {
      return true;
    }
  }
  return false;
}

export interface CopyLimits {
  maxBytes: number;
  maxFiles: number;
  /** Real paths never copied (the data directory, secret files, the workspaces root). */
  excluded: string[];
  tooLarge(message: string): Error;
}

/**
 * Copies the directory `parts` below `root` into the new directory `dest` without following any symlink, on the way
 * to the source or inside it (a link is copied as a link; FIFOs, sockets and devices are skipped), stopping with
 * `limits.tooLarge` as soon as the entries or bytes pass the limits. `dest` is the fresh workspace, not yet reachable by
 * any command.
 */
export async function copyTree(root: string, parts: string[], dest: string, limits: CopyLimits): Promise<void> {
  const realRoot = await realpath(root);
  const walked = await walkDirs(realRoot, parts, false);
  if (!walked) throw new PathEscapeError(`${join(realRoot, ...parts)} does not exist`);
  const inside = (p: string, e: string) => p === e || p.startsWith(e.endsWith(sep) ? e : e + sep);
  let files = 0;
  let bytes = 0;
  const buf = Buffer.allocUnsafe(1024 * 1024);
  const copyDir = async (dir: FileHandle, from: string, to: string): Promise<void> => {
    await mkdir(to, { recursive: true, mode: 0o755 });
    for (const e of await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true })) {
      const src = join(from, e.name);
      if (limits.excluded.some((x) => inside(src, x))) continue;
      if ((files += 1) > limits.maxFiles) throw limits.tooLarge(`has more than ${limits.maxFiles} entries`);
      if (e.isSymbolicLink()) await symlink(await readlink(at(dir, e.name)), join(to, e.name));
      else if (e.isDirectory()) {
        // Gone since readdir, swapped for a symlink (O_NOFOLLOW refuses it) or unreadable: skipped, like a FIFO.
        const child = await openDir(at(dir, e.name)).catch(() => null);
        if (!child) continue;
        try {
          await copyDir(child, src, join(to, e.name));
          await chmod(join(to, e.name), (await child.stat()).mode & 0o7777);
        } finally {
          await child.close();
        }
      } else if (e.isFile()) {
        // As for a directory: an entry gone, swapped for a symlink or unreadable is not copied.
        const file = await openFileAt(dir, e.name).catch(() => null);
        if (!file) continue;
        try {
          const st = await file.stat();
          if ((bytes += st.size) > limits.maxBytes) throw limits.tooLarge(`is larger than ${limits.maxBytes} bytes`);
          const out = await open(join(to, e.name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, st.mode & 0o777);
          try {
            for (let pos = 0; ;) {
              const { bytesRead } = await file.read(buf, 0, buf.length, pos);
              if (bytesRead === 0) break;
              await out.write(buf, 0, bytesRead);
              pos += bytesRead;
            }
          } finally {
            await out.close();
          }
        } finally {
          await file.close();
        }
      }
    }
  };
  try {
    await copyDir(walked.dir, join(realRoot, ...parts), dest);
  } finally {
    await walked.dir.close();
  }
}
