import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { relativeInside, resolveInside } from './path-resolver';
import { readHead, withWorkspaceFile, writeWorkspaceFile } from './workspace-fs';

describe('resolveInside (DESIGN §8)', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-paths-')));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  beforeAll(() => {
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(outside);
    mkdirSync(join(base, 'ws-evil'));
    writeFileSync(join(root, 'src', 'a.txt'), 'a');
    writeFileSync(join(outside, 'secret'), 's');
    symlinkSync(outside, join(root, 'linkdir'));
    symlinkSync(join(outside, 'secret'), join(root, 'linkfile'));
    symlinkSync(join(root, 'src'), join(root, 'inner-link'));
  });

  it('resolves existing and not-yet-existing paths inside the root', async () => {
    expect(await resolveInside(root, 'src/a.txt')).toBe(join(root, 'src', 'a.txt'));
    expect(await resolveInside(root, 'src/new/deeper/file.txt')).toBe(join(root, 'src', 'new', 'deeper', 'file.txt'));
    expect(await resolveInside(root, join(root, 'src'))).toBe(join(root, 'src'));
    expect(await resolveInside(root, 'inner-link/a.txt')).toBe(join(root, 'src', 'a.txt'));
    expect(await resolveInside(root, '.')).toBe(root);
  });

  it.each([
    ['.. escape', '../outside/secret'],
    ['nested .. escape', 'src/../../outside/x'],
    ['absolute path outside', '/etc/passwd'],
    ['prefix sibling', join(base, 'ws-evil', 'x')],
    ['symlinked folder leaving the root', 'linkdir/secret'],
    ['not-yet-existing target under a symlinked folder', 'linkdir/new-file.txt'],
    ['symlinked file leaving the root', 'linkfile'],
    ['NUL byte', 'src/a\0.txt'],
    ['empty path', ''],
  ])('refuses a %s with invalid_request', async (_name, requested) => {
    await expect(resolveInside(root, requested)).rejects.toMatchObject({ status: 400, type: 'invalid_request' });
  });

  it('gives patch paths relative to the root, also for a root of /', async () => {
    expect(await relativeInside(root, join(root, 'src', 'a.txt'))).toBe('src/a.txt');
    expect(await relativeInside(root, root)).toBe('.');
    expect(await relativeInside('/', join(root, 'src', 'a.txt'))).toBe(join(root, 'src', 'a.txt').slice(1));
    await expect(relativeInside(root, join(base, 'outside', 'secret'))).rejects.toMatchObject({ type: 'invalid_request' });
  });

  it('workspace-fs never follows a symlink on the way and reads only the head of a file', async () => {
    await expect(withWorkspaceFile(root, join(root, 'linkdir', 'secret'), async () => 'x')).rejects.toMatchObject({ type: 'invalid_request' });
    await expect(withWorkspaceFile(root, join(root, 'linkfile'), async () => 'x')).rejects.toMatchObject({ type: 'invalid_request' });
    await expect(writeWorkspaceFile(root, join(root, 'linkdir', 'new.txt'), 'x')).rejects.toMatchObject({ type: 'invalid_request' });
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(await withWorkspaceFile(root, join(root, 'src', 'a.txt'), (f) => readHead(f, 1))).toMatchObject({ size: 1, truncated: false });
    await writeWorkspaceFile(root, join(root, 'made', 'deep', 'b.txt'), 'bbb');
    expect(await withWorkspaceFile(root, join(root, 'made', 'deep', 'b.txt'), async (f) => (await readHead(f, 2)).truncated)).toBe(true);
    expect(await withWorkspaceFile(root, join(root, 'made', 'nope.txt'), async () => 'x')).toBeNull();
    await writeWorkspaceFile(root, join(root, 'made', 'deep', 'b.txt'), null);
    expect(existsSync(join(root, 'made', 'deep', 'b.txt'))).toBe(false);
  });
});
