import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RunExecutorKind } from '../run-kind.decorator';
import type { ExecutionPlan, RunExecutor } from '../run-executor';
import type { TaskEntity } from '../task.entity';
import { commandPlan } from './command-step';
import { GIT_ENV, gitArgv, gitArgvProblem } from '@modules/workspaces';

/** execution_kind=git: one git command in the workspace plus a `git_summary` artifact (validation and plan; GitRunnerService runs it). */
@Injectable()
@RunExecutorKind()
export class GitExecutor implements RunExecutor {
  readonly kind = 'git';

  constructor(private readonly config: AppConfig) {}

  validate(task: TaskEntity): string[] {
    if (!task.gitCommand.trim()) return ['git_command is required for execution_kind=git'];
    const argv = gitArgv(task.gitCommand);
    if (!argv) return ['git_command must be a git command line (quotes must be closed)'];
    const problem = gitArgvProblem(argv);
    return problem ? [problem] : [];
  }

  plan(task: TaskEntity, workspacePath: string): ExecutionPlan {
    return commandPlan(this.config.tasks, task, { argv: gitArgv(task.gitCommand) ?? ['git'], extraEnv: GIT_ENV }, workspacePath);
  }
}
