import { randomUUID } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { TasksConfig } from '@core/config/groups/tasks.env';
import { commandEnv } from './command-env';
import { GIT_ENV } from '../git/git-argv';
import type { CommandSandbox } from '../command-sandbox';
import { runProcess } from '../sandbox/process-runner';
import { resolveInside } from './path-resolver';
import { writeWorkspaceFile } from './workspace-fs';

const MAX_DIFF_BYTES = 4 * 1024 * 1024;

/**
 * A git workspace's changes, seen by the worker through the command sandbox (docs/design.md §11.7: the workspace's own
 * `.git/config` is its content, never trusted outside it). `tree()` snapshots the working tree — tracked and untracked
 * files, `.gitignore` respected — as a tree object through a private index file, so neither the user's index nor HEAD
 * changes; `diff(base)` is everything since such a snapshot; `applyReverse` takes a patch back out.
 */
export class WorkspaceGit {
  constructor(
    private readonly sandbox: CommandSandbox,
    private readonly config: TasksConfig,
    readonly workspace: string,
    private readonly signal: AbortSignal,
  ) {}

  private async git(args: string[], extraEnv: Record<string, string> = {}): Promise<{ ok: boolean; out: string; err: string }> {
    const r = await runProcess({
      argv: this.sandbox.wrap(['git', ...args], { workspace: this.workspace, cwd: this.workspace, readOnly: false, network: false }),
      cwd: this.workspace,
      env: commandEnv(this.config, this.workspace, { ...GIT_ENV, ...extraEnv }),
      timeoutMs: 60_000,
      maxOutputBytes: MAX_DIFF_BYTES,
      signal: this.signal,
    });
    return { ok: r.exitCode === 0 && !r.truncated, out: r.stdout.toString('utf8'), err: r.stderr.toString('utf8') };
  }

  /** `name` in the git dir when that dir is inside the workspace (resolved, no symlink leaving it), else null. */
  private async inside(gitDir: string, name: string): Promise<string | null> {
    try {
      return await resolveInside(this.workspace, join(gitDir.startsWith('/') ? gitDir : join(this.workspace, gitDir), name), 'git dir');
    } catch {
      return null;
    }
  }

  /**
   * The working tree as a tree id, or null when the workspace is not a git work tree. Only a git dir inside the workspace
   * counts (see `inside`), and git finds one from the root only through a `.git` entry there: without one, no git
   * process is started (a run in a plain directory costs no child process).
   */
  async tree(): Promise<string | null> {
    if (!(await this.mayBeGitTree())) return null;
    const top = await this.git(['rev-parse', '--show-toplevel', '--git-dir']);
    if (!top.ok) return null;
    const [, gitDir] = top.out.trim().split('\n');
    // The git dir is named by the workspace's content (a `.git` file): the worker touches it only inside the workspace.
    const index = await this.inside(gitDir, `hecate-index-${randomUUID()}`);
    if (!index) return null;
    try {
      const env = { GIT_INDEX_FILE: index };
      if (!(await this.git(['add', '-A', '--', '.'], env)).ok) return null;
      const written = await this.git(['write-tree'], env);
      return written.ok ? written.out.trim() : null;
    } finally {
      await writeWorkspaceFile(this.workspace, index, null);
    }
  }

  /** False when git could find no work tree of the workspace's own (no `.git` at its root; the child env names no git dir). */
  private mayBeGitTree(): Promise<boolean> {
    return lstat(join(this.workspace, '.git')).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT' && err.code !== 'ENOTDIR',
    );
  }

  /** Unified diff from `base` (a tree id) to the working tree now, optionally limited to `paths` (names, never globs). */
  async diff(base: string, paths: string[] = []): Promise<string | null> {
    const now = await this.tree();
    if (!now) return null;
    const d = await this.git([
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--binary',
      '-M',
      base,
      now,
      ...(paths.length ? ['--', ...paths.map((p) => `:(literal)${p}`)] : []),
    ]);
    return d.ok ? d.out : null;
  }

  /** Applies `patch` in reverse to the working tree (all or nothing); the error is git's own. */
  async applyReverse(patch: string): Promise<{ ok: boolean; error: string }> {
    const top = await this.git(['rev-parse', '--git-dir']);
    if (!top.ok) return { ok: false, error: 'the workspace is not a git work tree' };
    const file = await this.inside(top.out.trim(), `hecate-revert-${randomUUID()}.patch`);
    if (!file) return { ok: false, error: 'the git directory of the workspace is outside it' };
    await writeWorkspaceFile(this.workspace, file, patch);
    try {
      const r = await this.git(['apply', '-R', '--whitespace=nowarn', file]);
      return { ok: r.ok, error: r.err.trim() };
    } finally {
      await writeWorkspaceFile(this.workspace, file, null);
    }
  }
}
