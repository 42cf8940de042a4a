import { chmod, lchown, lstat, mkdir, mkdtemp, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppConfig } from '@core/config/app-config';
import { checkOutboundUrl } from '@core/net/outbound-url-policy';
import { COMMAND_SANDBOX, type CommandSandbox } from '../command-sandbox';
import { GIT_ENV } from '../git/git-argv';
import { runProcess } from '../sandbox/process-runner';
import { InvalidRequestError } from '@core/http/domain-error';
import { PathEscapeError } from '../workspace-errors';
import { commandEnv } from './command-env';
import { resolveInside } from './path-resolver';
import { copyTree } from './workspace-fs';

export type WorkspaceSource = 'in_place' | 'reused' | 'clone' | 'copy' | 'empty';

/** The workspace settings of a task (its `workspace_mode`, `working_directory`, `repo`… columns). */
export interface WorkspaceSpec {
  id: string;
  workspaceMode: string;
  workingDirectory: string;
  sandboxAllowedRoot: string;
  repo: string;
  baseBranch: string;
  sandboxNetwork: boolean;
  filePath: string;
}

/** The run a workspace is prepared for: its id, the path it already has, the run it resumes. */
export interface WorkspaceRun {
  id: string;
  workspacePath: string;
  resumedFromRunId: string | null;
}

/** Who asks for a workspace: the operator may use any host directory; API keys only GATEWAY_WORKSPACE_ROOTS. */
export interface WorkspaceCaller {
  hostPaths: boolean;
}

const isRemote = (repo: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/]+@[^/]+:/.test(repo);
const within = (child: string, parent: string): boolean => child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
const realOr = async (p: string): Promise<string> => {
  try {
    return await realpath(p);
  } catch {
    return p;
  }
};

export class WorkspaceTooLargeError extends Error {}

/** Why a run cannot go on: its workspace was made elsewhere (another worker without a shared volume) or removed. */
export const workspaceUnavailable = (path: string, what = 'the workspace'): string =>
  `${what} ${path} is not on this worker: it was prepared on another worker (mount one GATEWAY_WORKSPACES_DIR volume, ReadWriteMany, on every worker) or removed by retention`;

export const isDir = async (p: string): Promise<boolean> => {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Workspaces (docs/api.md §4 `workspace_mode`): `in_place` runs in `working_directory`, which must be inside
 * `sandbox_allowed_root`; every other mode copies `working_directory` (or clones `repo`) into
 * GATEWAY_WORKSPACES_DIR/<task>/<run>. A resumed run reuses its source run's workspace.
 */
@Injectable()
export class WorkspaceService {
  constructor(
    private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The worker's command sandbox (COMMAND_SANDBOX); only a worker builds one, and only a worker prepares a workspace. */
  private sandbox(): CommandSandbox {
    let sandbox: CommandSandbox | undefined;
    try {
      sandbox = this.moduleRef.get<CommandSandbox>(COMMAND_SANDBOX, { strict: false });
    } catch {
      // not provided in this process
    }
    if (!sandbox) throw new Error('no command sandbox in this process: commands run on workers');
    return sandbox;
  }

  get root(): string {
    return this.config.tasks.workspacesDir;
  }

  /** Where a run's workspace lives (decided when the run is created, so approvals can show the cwd). */
  plannedPath(task: WorkspaceSpec, runId: string, reusePath?: string): string {
    if (task.workspaceMode === 'in_place') return task.workingDirectory;
    if (reusePath) return reusePath;
    return join(this.root, task.id, runId);
  }

  /** Whether the create-time checks read host directories (then they run on a worker: the api never opens one). */
  readsHost(task: WorkspaceSpec): boolean {
    return Boolean(task.workingDirectory || task.sandboxAllowedRoot || (task.repo && !isRemote(task.repo)));
  }

  /** Create-time checks of the workspace fields (and an in-place `file_path`); returns problems (400). */
  async problems(task: WorkspaceSpec, caller: WorkspaceCaller = { hostPaths: true }): Promise<string[]> {
    const problems = await this.workspaceProblems(task, caller);
    if (problems.length === 0 && task.workspaceMode === 'in_place' && task.filePath) {
      try {
        await resolveInside(task.workingDirectory, task.filePath, 'file_path');
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    return problems;
  }

  private async workspaceProblems(task: WorkspaceSpec, caller: WorkspaceCaller): Promise<string[]> {
    const problems: string[] = [];
    if (task.sandboxAllowedRoot && !isAbsolute(task.sandboxAllowedRoot)) problems.push('sandbox_allowed_root must be an absolute path');
    if (task.workspaceMode === 'in_place' && !task.workingDirectory) problems.push('working_directory is required when workspace_mode=in_place');
    // API keys: the roots first, so a path outside them gets one answer whether or not it exists on the host.
    if (!caller.hostPaths && problems.length === 0) {
      const outside = await this.hostPathProblems(task);
      if (outside.length > 0) return outside;
    }
    if (task.sandboxAllowedRoot && problems.length === 0 && !(await isDir(task.sandboxAllowedRoot))) {
      problems.push(`sandbox_allowed_root ${task.sandboxAllowedRoot} is not a directory`);
    }
    if (task.workingDirectory && problems.length === 0) {
      if (!(await isDir(task.workingDirectory))) {
        problems.push(`working_directory ${task.workingDirectory} is not a directory`);
      } else if (task.sandboxAllowedRoot) {
        try {
          await resolveInside(task.sandboxAllowedRoot, task.workingDirectory, 'working_directory');
        } catch (err) {
          problems.push((err as Error).message);
        }
      }
    }
    if (task.repo) problems.push(...(await this.repoProblems(task, caller)));
    return problems;
  }

  /** API keys reach host directories only under GATEWAY_WORKSPACE_ROOTS (none by default). */
  private async hostPathProblems(task: WorkspaceSpec): Promise<string[]> {
    const problems: string[] = [];
    const roots = this.config.tasks.workspaceRoots;
    const check = async (what: string, path: string) => {
      if (!path || (await this.underWorkspaceRoots(path, what))) return;
      problems.push(
        roots.length === 0
          ? `${what}: API keys cannot use host directories (no GATEWAY_WORKSPACE_ROOTS configured); use a fresh workspace or a repo clone`
          : `${what} ${path} is outside GATEWAY_WORKSPACE_ROOTS (${roots.join(', ')})`,
      );
    };
    await check('working_directory', task.workingDirectory);
    await check('sandbox_allowed_root', task.sandboxAllowedRoot);
    return problems;
  }

  /** The one rule for API keys: `path` (symlinks resolved) lies inside one of GATEWAY_WORKSPACE_ROOTS. */
  private async underWorkspaceRoots(path: string, what: string): Promise<boolean> {
    for (const root of this.config.tasks.workspaceRoots) {
      try {
        await resolveInside(root, path, what);
        return true;
      } catch {
        // try the next root
      }
    }
    return false;
  }

  private async repoProblems(task: WorkspaceSpec, caller: WorkspaceCaller): Promise<string[]> {
    if (task.workspaceMode === 'in_place') return ['repo cannot be combined with workspace_mode=in_place'];
    if (!isRemote(task.repo)) {
      if (!isAbsolute(task.repo)) return ['repo must be an http(s) URL or an absolute path'];
      if (!(await isDir(task.repo))) return [`repo ${task.repo} is not a directory`];
      return caller.hostPaths
        ? []
        : this.hostPathProblems({ ...task, workingDirectory: task.repo, sandboxAllowedRoot: '' }).then((p) =>
            p.map((m) => m.replace('working_directory', 'repo')),
          );
    }
    if (!task.sandboxNetwork) return ['repo: cloning over the network needs sandbox_network=true (the network_egress gate applies)'];
    const verdict = await checkOutboundUrl(task.repo, { ...this.config.tasks.outbound, selfPort: this.config.server.port });
    return verdict.ok ? [] : [`repo: ${verdict.message}`];
  }

  /**
   * Makes the run's workspace ready. Idempotent: a partial copy from a crashed attempt is removed and
   * redone; a reused or in-place workspace is only checked.
   */
  async prepare(task: WorkspaceSpec, runRow: WorkspaceRun, signal: AbortSignal): Promise<{ path: string; source: WorkspaceSource }> {
    const path = runRow.workspacePath;
    if (task.workspaceMode === 'in_place') {
      const allowed = task.sandboxAllowedRoot || task.workingDirectory;
      const resolved = await resolveInside(allowed, task.workingDirectory, 'working_directory');
      if (!(await isDir(resolved))) throw new PathEscapeError(`working_directory ${task.workingDirectory} is not a directory`);
      return { path: resolved, source: 'in_place' };
    }
    // Anything else lives under the workspaces root, never elsewhere.
    await mkdir(this.root, { recursive: true });
    // The sandbox's uid must reach its own workspace (traverse, not list, the root).
    if (this.sandbox().workspaceIdentity()) await chmod(this.root, 0o711);
    const inRoot = await resolveInside(this.root, path, 'workspace');
    if (runRow.resumedFromRunId) {
      // A resumed run continues in its source run's workspace: it must be reachable here, never silently replaced.
      if (await isDir(inRoot)) return { path: inRoot, source: 'reused' };
      throw new Error(workspaceUnavailable(inRoot, `run ${runRow.resumedFromRunId}'s workspace`));
    }
    await rm(inRoot, { recursive: true, force: true });
    await mkdir(dirname(inRoot), { recursive: true });
    if (task.repo) {
      await this.clone(task, inRoot, signal);
      return { path: inRoot, source: 'clone' };
    }
    if (task.workingDirectory) {
      if (task.sandboxAllowedRoot) await resolveInside(task.sandboxAllowedRoot, task.workingDirectory, 'working_directory');
      await this.copy(task.workingDirectory, inRoot);
      await this.adopt(inRoot);
      return { path: inRoot, source: 'copy' };
    }
    await mkdir(inRoot, { recursive: true });
    await this.adopt(inRoot);
    return { path: inRoot, source: 'empty' };
  }

  /**
   * Clones `repo` into the (empty) workspace under the sandbox, as the sandbox's uid: a remote URL only after the
   * outbound policy passed it, connecting to the address that was checked (no second DNS answer), no redirects.
   */
  private async clone(task: WorkspaceSpec, dir: string, signal: AbortSignal): Promise<void> {
    const sandbox = this.sandbox();
    const refusal = sandbox.refusal();
    if (refusal) throw new Error(refusal);
    await mkdir(dir, { recursive: true });
    await this.adopt(dir);
    const argv = ['git', '-c', 'http.followRedirects=false'];
    const readPaths: string[] = [];
    let trust: string | undefined;
    if (isRemote(task.repo)) {
      const verdict = await checkOutboundUrl(task.repo, { ...this.config.tasks.outbound, selfPort: this.config.server.port });
      if (!verdict.ok) throw new Error(`repo: ${verdict.message}`);
      const address = verdict.address.includes(':') ? `[${verdict.address}]` : verdict.address;
      argv.push('-c', `http.curloptResolve=${verdict.host}:${verdict.port}:${address}`);
    } else {
      readPaths.push(task.repo);
      // A local repository usually belongs to another user than the sandbox's (the operator's checkout, root's): git
      // refuses it as "dubious ownership", and git 2.39 (Debian 12) honours safe.directory only from a global or
      // system file.
      trust = await trustingGitConfig();
      readPaths.push(dirname(trust));
    }
    argv.push('clone', '--quiet', '--no-hardlinks');
    if (task.baseBranch) argv.push('--branch', task.baseBranch);
    argv.push('--', task.repo, '.');
    const network = isRemote(task.repo);
    const r = await runProcess({
      argv: sandbox.wrap(argv, { workspace: dir, cwd: dir, readOnly: false, network, readPaths }),
      cwd: dir,
      env: commandEnv(this.config.tasks, dir, trust ? { ...GIT_ENV, GIT_CONFIG_GLOBAL: trust } : GIT_ENV),
      timeoutMs: 10 * 60_000,
      maxOutputBytes: 256 * 1024,
      signal,
    });
    if (r.exitCode !== 0) {
      const why = r.spawnError ?? (r.timedOut ? 'timed out' : r.stderr.toString('utf8').trim().slice(-500) || `exit ${r.exitCode ?? r.signal}`);
      throw new Error(`git clone of ${task.repo} failed: ${why}`);
    }
  }

  /**
   * Copies a host directory into the workspace, bounded (GATEWAY_WORKSPACE_COPY_MAX_BYTES / _MAX_FILES, stopped and
   * removed as soon as it passes them) and never taking the server's data directory, secret files or workspaces
   * along. No symlink is followed (workspace-fs copyTree): a source under GATEWAY_WORKSPACE_ROOTS — where a tenant's
   * in-place commands may be swapping directories for links — is walked from that root, each step no-follow.
   */
  private async copy(source: string, dest: string): Promise<void> {
    const excluded = await Promise.all([this.config.database.dataDir, ...this.config.secretFiles, this.root].map(realOr));
    const { maxBytes, maxFiles } = this.config.tasks.workspaceCopy;
    const lexical = resolve(source);
    const root = this.config.tasks.workspaceRoots.find((r) => within(lexical, r));
    const [from, parts] = root ? [root, relative(root, lexical).split(sep).filter(Boolean)] : [await realOr(source), []];
    const tooLarge = (what: string) =>
      new WorkspaceTooLargeError(
        `working_directory ${source} ${what} (${what.startsWith('has') ? 'GATEWAY_WORKSPACE_COPY_MAX_FILES' : 'GATEWAY_WORKSPACE_COPY_MAX_BYTES'})`,
      );
    try {
      await copyTree(from, parts, dest, { maxBytes, maxFiles, excluded, tooLarge });
    } catch (err) {
      await rm(dest, { recursive: true, force: true });
      throw err;
    }
  }

  /** Gives a managed workspace to the sandbox's uid (when the worker is root), so commands can write it. */
  private async adopt(dir: string): Promise<void> {
    const identity = this.sandbox().workspaceIdentity();
    if (!identity) return;
    const walk = async (path: string): Promise<void> => {
      await lchown(path, identity.uid, identity.gid);
      const st = await lstat(path);
      if (!st.isDirectory()) return;
      for (const entry of await readdir(path)) await walk(join(path, entry));
    };
    await walk(dir);
  }

  /** Removes workspaces under the workspaces root (never an in-place directory, never anything outside the root). */
  async remove(paths: string[]): Promise<number> {
    let removed = 0;
    for (const path of paths) {
      if (!within(path, this.root) || path === this.root) continue;
      await rm(path, { recursive: true, force: true });
      removed += 1;
    }
    return removed;
  }

  /**
   * An Agent Chat workspace: an existing directory's real path (400 otherwise). For API keys it must lie under
   * GATEWAY_WORKSPACE_ROOTS (the tasks' rule), and a directory outside them answers exactly like a missing one.
   */
  async canonical(path: string, caller: WorkspaceCaller = { hostPaths: true }): Promise<string> {
    const allowed = caller.hostPaths || (isAbsolute(path) && (await this.underWorkspaceRoots(path, 'workspace')));
    try {
      const real = await realpath(path);
      if (allowed && (await stat(real)).isDirectory()) return real;
    } catch {
      // reported below
    }
    const where = caller.hostPaths ? '' : ' under GATEWAY_WORKSPACE_ROOTS';
    throw new InvalidRequestError(`workspace ${JSON.stringify(path)} is not an existing directory${where}`, { details: { field: 'workspace' } });
  }

  /** The directory of a task's workspaces. */
  taskDir(taskId: string): string {
    return join(this.root, taskId);
  }
}

let trustFile: Promise<string> | undefined;

/**
 * A global git configuration that trusts every directory (`safe.directory = *`), made once per process in a
 * directory of its own (world-readable, so the sandbox's uid reads it once mounted): the clone of a local repository
 * gets it as GIT_CONFIG_GLOBAL, and nothing else does.
 */
async function trustingGitConfig(): Promise<string> {
  // Made again if something (a tmp cleaner) removed it since.
  if (trustFile && !existsSync(await trustFile)) trustFile = undefined;
  trustFile ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hecate-git-trust-'));
    await chmod(dir, 0o755);
    const file = join(dir, 'gitconfig');
    await writeFile(file, '[safe]\n\tdirectory = *\n', { mode: 0o644 });
    return file;
  })();
  return trustFile;
}
