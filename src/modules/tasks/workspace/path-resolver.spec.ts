import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openNoFollow, resolveInside } from './path-resolver';

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

  it('refuses to open a symlink as the last component', async () => {
    await expect(openNoFollow(join(root, 'inner-link'), 'r')).rejects.toBeDefined();
    const handle = await openNoFollow(join(root, 'src', 'a.txt'), 'r');
    await handle.close();
  });
});
