import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '@core/config/app-config';
import { loadConfig } from '@core/config/config.loader';
import { SandboxService } from '../sandbox/sandbox.service';
import { WorkspaceGit } from './workspace-git';

/** Which workspaces start a git process at all: a run in a plain directory must not pay for one. */
describe('WorkspaceGit.tree: git processes only for a workspace with a git dir of its own', () => {
  let root: string;
  let calls: string;
  let config: AppConfig;
  let sandbox: SandboxService;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-workspace-git-')));
    // A `git` first on the child PATH that notes each start, then runs the real one.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    calls = join(root, 'calls');
    writeFileSync(calls, '');
    const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$1" >> '${calls}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    config = loadConfig({ GATEWAY_TASK_SANDBOX: 'none', PATH: `${bin}:${process.env.PATH}` }) as AppConfig;
    sandbox = new SandboxService(config);
    await sandbox.onModuleInit();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const started = () => readFileSync(calls, 'utf8').split('\n').filter(Boolean);
  const gitOf = (dir: string) => new WorkspaceGit(sandbox, config.tasks, dir, new AbortController().signal);
  const dir = (name: string) => {
    const d = join(root, name);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'a.txt'), 'one\n');
    return d;
  };

  it('answers null for a plain directory without starting git', async () => {
    const before = started().length;
    expect(await gitOf(dir('plain')).tree()).toBeNull();
    expect(started().length).toBe(before);
  });

  it('answers null for a directory inside someone else’s repository (its git dir is outside the workspace)', async () => {
    const parent = dir('parent');
    execFileSync('git', ['init', '-q', parent]);
    const before = started().length;
    expect(await gitOf(dir('parent/sub')).tree()).toBeNull();
    expect(started().length).toBe(before);
  });

  it('snapshots a git work tree and diffs the changes since', async () => {
    const repo = dir('repo');
    execFileSync('git', ['init', '-q', repo]);
    const before = started().length;
    const base = await gitOf(repo).tree();
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    expect(started().length).toBeGreaterThan(before);
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    const diff = await gitOf(repo).diff(base!);
    expect(diff).toContain('-one');
    expect(diff).toContain('+two');
  });
});
