import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');
const sdk = join(root, 'libs', 'sdk');

/** `npm pack <dir> --json --dry-run` from the repository root, as a user runs it: exit code, stdout, stderr. */
const pack = (dir: string) => {
  const run = spawnSync('npm', ['pack', dir, '--json', '--dry-run'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
};

/** A copy of the SDK package at `<tmp>/libs/sdk` (outside the repository, so only its own files are checked). */
const copyOfSdk = (parts: string[]) => {
  const tmp = mkdtempSync(join(tmpdir(), 'hecate-sdk-pack-'));
  const dir = join(tmp, 'libs', 'sdk');
  mkdirSync(dir, { recursive: true });
  for (const part of parts) cpSync(join(sdk, part), join(dir, part), { recursive: true });
  return { tmp, dir };
};

/**
 * Packing the SDK (`npm pack ./libs/sdk`) packs what `npm run build` made: stdout is the tarball listing as JSON and
 * nothing else, the server's dist/ is left alone (a running server keeps its files), and a missing or stale build
 * fails with a message that says to run `npm run build`.
 */
describe('npm pack ./libs/sdk', () => {
  const temps: string[] = [];
  afterAll(() => temps.forEach((tmp) => rmSync(tmp, { recursive: true, force: true })));

  it('prints the listing as JSON, with the built client, its types, the document and the README, and rebuilds nothing', () => {
    const serverMain = join(root, 'dist', 'src', 'main.js');
    const sdkMain = join(sdk, 'dist', 'index.js');
    const before = [statSync(serverMain).mtimeMs, statSync(sdkMain).mtimeMs];

    const { code, stdout, stderr } = pack('./libs/sdk');
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    const listing = JSON.parse(stdout) as Array<{ name: string; files: Array<{ path: string }> }>;
    expect(listing).toHaveLength(1);
    expect(listing[0].name).toBe('@hecate/sdk');
    expect(listing[0].files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'openapi.json', 'README.md', 'package.json']),
    );
    expect(listing[0].files.filter((f) => f.path.startsWith('src/') || f.path.startsWith('scripts/'))).toEqual([]);

    expect([statSync(serverMain).mtimeMs, statSync(sdkMain).mtimeMs]).toEqual(before);
  });

  it('fails before packing when the build is missing, saying to run npm run build', () => {
    const { tmp, dir } = copyOfSdk(['package.json', 'README.md', 'scripts']);
    temps.push(tmp);
    const { code, stdout, stderr } = pack(dir);
    expect(code).not.toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ error: { summary: 'command failed' } });
    expect(stderr).toContain('@hecate/sdk: openapi.json, src/generated/schema.ts, src/generated/operations.ts, dist/index.js, dist/index.d.ts are missing');
    expect(stderr).toContain('run `npm run build` at the repository root');
  });

  it('fails when a source changed after the build, naming it', () => {
    const { tmp, dir } = copyOfSdk(['package.json', 'README.md', 'scripts', 'src', 'dist', 'openapi.json', '.build-inputs.json']);
    temps.push(tmp);
    // The copy sits in a repository of the same server sources.
    symlinkSync(join(root, 'src'), join(tmp, 'src'));
    symlinkSync(join(root, 'libs', 'contracts'), join(tmp, 'libs', 'contracts'));
    expect(pack(dir)).toMatchObject({ code: 0, stderr: expect.not.stringContaining('@hecate/sdk:') });

    appendFileSync(join(dir, 'src', 'client.ts'), '// edited after the build\n');
    const { code, stderr } = pack(dir);
    expect(code).not.toBe(0);
    expect(stderr).toContain('@hecate/sdk: libs/sdk/src/client.ts changed since the last build; run `npm run build`');
  });
});
