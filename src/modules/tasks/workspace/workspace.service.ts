import { execFile } from 'node:child_process';
import { cp, mkdir, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import type { TaskRunEntity } from '../task-run.entity';
import type { TaskEntity } from '../task.entity';
import { PathEscapeError } from '../tasks.errors';
import { resolveInside } from './path-resolver';

const run = promisify(execFile);

export type WorkspaceSource = 'in_place' | 'reused' | 'clone' | 'copy' | 'empty';

type WorkspaceSpec = Pick<TaskEntity, 'id' | 'workspaceMode' | 'workingDirectory' | 'sandboxAllowedRoot' | 'repo' | 'baseBranch'>;

const isDir = async (p: string): Promise<boolean> => {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Workspaces (seed 003 `workspace_mode`): `in_place` runs in `working_directory`, which must be inside
 * `sandbox_allowed_root`; every other mode copies `working_directory` (or clones `repo`) into
 * GATEWAY_WORKSPACES_DIR/<task>/<run>. A resumed run reuses its source run's workspace.
 */
@Injectable()
export class WorkspaceService {
  constructor(private readonly config: AppConfig) {}

  get root(): string {
    return this.config.tasks.workspacesDir;
  }

  /** Where a run's workspace lives (decided when the run is created, so approvals can show the cwd). */
  plannedPath(task: WorkspaceSpec, runId: string, reusePath?: string): string {
    if (task.workspaceMode === 'in_place') return task.workingDirectory;
    if (reusePath) return reusePath;
    return join(this.root, task.id, runId);
  }

  /** Create-time checks of the workspace fields; returns problems (400). */
  async problems(task: WorkspaceSpec): Promise<string[]> {
    const problems: string[] = [];
    if (task.sandboxAllowedRoot) {
      if (!isAbsolute(task.sandboxAllowedRoot)) problems.push('sandbox_allowed_root must be an absolute path');
      else if (!(await isDir(task.sandboxAllowedRoot))) problems.push(`sandbox_allowed_root ${task.sandboxAllowedRoot} is not a directory`);
    }
    if (task.workspaceMode === 'in_place' && !task.workingDirectory) problems.push('working_directory is required when workspace_mode=in_place');
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
    return problems;
  }

  /**
   * Makes the run's workspace ready. Idempotent: a partial copy from a crashed attempt is removed and
   * redone; a reused or in-place workspace is only checked.
   */
  async prepare(
    task: WorkspaceSpec,
    runRow: Pick<TaskRunEntity, 'id' | 'workspacePath' | 'resumedFromRunId'>,
    signal: AbortSignal,
  ): Promise<{ path: string; source: WorkspaceSource }> {
    const path = runRow.workspacePath;
    if (task.workspaceMode === 'in_place') {
      const allowed = task.sandboxAllowedRoot || task.workingDirectory;
      const resolved = await resolveInside(allowed, task.workingDirectory, 'working_directory');
      if (!(await isDir(resolved))) throw new PathEscapeError(`working_directory ${task.workingDirectory} is not a directory`);
      return { path: resolved, source: 'in_place' };
    }
    // Anything else lives under the workspaces root, never elsewhere.
    await mkdir(this.root, { recursive: true });
    const inRoot = await resolveInside(this.root, path, 'workspace');
    if (runRow.resumedFromRunId && (await isDir(inRoot))) return { path: inRoot, source: 'reused' };
    await rm(inRoot, { recursive: true, force: true });
    await mkdir(dirname(inRoot), { recursive: true });
    if (task.repo) {
      const args = ['clone', '--quiet'];
      if (task.baseBranch) args.push('--branch', task.baseBranch);
      args.push('--', task.repo, inRoot);
      await run('git', args, { signal, timeout: 10 * 60_000, env: { ...this.config.tasks.childEnv, GIT_TERMINAL_PROMPT: '0', HOME: dirname(inRoot) } });
      return { path: inRoot, source: 'clone' };
    }
    if (task.workingDirectory) {
      if (task.sandboxAllowedRoot) await resolveInside(task.sandboxAllowedRoot, task.workingDirectory, 'working_directory');
      await cp(task.workingDirectory, inRoot, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
      return { path: inRoot, source: 'copy' };
    }
    await mkdir(inRoot, { recursive: true });
    return { path: inRoot, source: 'empty' };
  }

  /** Removes a task's workspaces (never an in-place directory). */
  async removeTask(taskId: string): Promise<void> {
    await rm(join(this.root, taskId), { recursive: true, force: true });
  }

  async removeRun(task: Pick<TaskEntity, 'workspaceMode'>, path: string): Promise<void> {
    if (task.workspaceMode === 'in_place' || !path.startsWith(this.root)) return;
    await rm(path, { recursive: true, force: true });
  }
}
