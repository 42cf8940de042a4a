import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ExecutorRegistry } from '../executor-registry.service';
import { commandEnv, runCommandStep } from '../executors/command-step';
import { gitArgv } from '../executors/git-argv';
import { GIT_ENV } from '../executors/git.executor';
import type { ExecutionContext, ExecutionOutcome, RunRunner } from '../run-executor';
import type { NewArtifact } from '../run-writer';
import { runProcess } from '../sandbox/process-runner';
import { SandboxService } from '../sandbox/sandbox.service';

/** Runs execution_kind=git on a worker, under the sandbox, and summarizes the workspace after it. */
@Injectable()
export class GitRunnerService implements RunRunner, OnModuleInit {
  readonly kind = 'git';

  constructor(
    private readonly registry: ExecutorRegistry,
    private readonly sandbox: SandboxService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.registry.registerRunner(this);
  }

  execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    return runCommandStep(ctx, this.sandbox, {
      kind: 'git',
      toolName: 'git_exec',
      title: 'Run git command',
      argv: gitArgv(ctx.task.gitCommand) ?? ['git'],
      extraEnv: GIT_ENV,
      summarize: (cwd) => this.summary(cwd, ctx.signal),
    });
  }

  /** `git status` and `git diff --stat` of the workspace after the command (empty when not a repository). */
  private async summary(cwd: string, signal: AbortSignal): Promise<NewArtifact[]> {
    const git = async (...args: string[]) => {
      const r = await runProcess({
        argv: ['git', ...args],
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
