import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RunRunnerKind } from '../run-kind.decorator';
import { runCommandStep } from '../executors/command-step';
import type { ExecutionContext, ExecutionOutcome, RunRunner } from '../run-executor';
import type { NewArtifact } from '../run-writer';
import { COMMAND_SANDBOX, type CommandSandbox, commandEnv, GIT_ENV, gitArgv, runProcess } from '@modules/workspaces';

/** Runs execution_kind=git on a worker, under the sandbox, and summarizes the workspace after it. */
@Injectable()
@RunRunnerKind()
export class GitRunnerService implements RunRunner {
  readonly kind = 'git';

  constructor(
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    private readonly config: AppConfig,
  ) {}

  execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    return runCommandStep(ctx, this.sandbox, {
      kind: 'git',
      toolName: 'git_exec',
      title: 'Run git command',
      argv: gitArgv(ctx.task.gitCommand) ?? ['git'],
      extraEnv: GIT_ENV,
      summarize: (cwd) => this.summary(cwd, ctx),
    });
  }

  /**
   * `git status` and `git diff --stat` of the workspace after the command (empty when not a repository), run under
   * the same sandbox: the workspace's own `.git/config` is the task's content, never trusted outside it.
   */
  private async summary(cwd: string, ctx: ExecutionContext): Promise<NewArtifact[]> {
    const { signal, workspace } = ctx;
    const git = async (...args: string[]) => {
      const r = await runProcess({
        argv: this.sandbox.wrap(['git', ...args], { workspace: workspace.path, cwd, readOnly: workspace.readOnly, network: false }),
        cwd,
        env: commandEnv(this.config.tasks, cwd, GIT_ENV),
        timeoutMs: 30_000,
        maxOutputBytes: 256 * 1024,
        signal,
      });
      return r.exitCode === 0 ? r.stdout.toString('utf8') : null;
    };
    const status = await git('status', '--porcelain=v1', '--branch');
    if (status === null) return [];
    const diffStat = (await git('diff', '--stat')) ?? '';
    return [{ kind: 'git_summary', name: 'git_summary', content: `# git status\n${status}\n# git diff --stat\n${diffStat}` }];
  }
}
