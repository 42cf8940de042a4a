import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RunExecutorKind } from '../run-kind.decorator';
import type { ExecutionPlan, RunExecutor } from '../run-executor';
import type { TaskEntity } from '../task.entity';
import { commandPlan } from './command-step';

export const shellArgvOf = (task: TaskEntity): string[] => ['/bin/sh', '-c', task.shellCommand];

/** execution_kind=shell: `shell_command` through /bin/sh in the workspace (validation and plan; ShellRunnerService runs it). */
@Injectable()
@RunExecutorKind()
export class ShellExecutor implements RunExecutor {
  readonly kind = 'shell';

  constructor(private readonly config: AppConfig) {}

  validate(task: TaskEntity): string[] {
    return task.shellCommand.trim() ? [] : ['shell_command is required for execution_kind=shell'];
  }

  plan(task: TaskEntity, workspacePath: string): ExecutionPlan {
    return commandPlan(this.config.tasks, task, { argv: shellArgvOf(task) }, workspacePath);
  }
}
