import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ExecutorRegistry } from '../executor-registry.service';
import type { ExecutionContext, ExecutionOutcome, ExecutionPlan, RunExecutor } from '../run-executor';
import { SandboxService } from '../sandbox/sandbox.service';
import type { TaskEntity } from '../task.entity';
import { commandPlan, runCommandStep } from './command-step';

const argvOf = (task: TaskEntity): string[] => ['/bin/sh', '-c', task.shellCommand];

/** execution_kind=shell: `shell_command` through /bin/sh in the workspace. */
@Injectable()
export class ShellExecutor implements RunExecutor, OnModuleInit {
  readonly kind = 'shell';

  constructor(
    private readonly registry: ExecutorRegistry,
    private readonly sandbox: SandboxService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  validate(task: TaskEntity): string[] {
    return task.shellCommand.trim() ? [] : ['shell_command is required for execution_kind=shell'];
  }

  plan(task: TaskEntity, workspacePath: string): ExecutionPlan {
    return commandPlan(this.config.tasks, this.sandbox, task, { argv: argvOf(task) }, workspacePath);
  }

  execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    return runCommandStep(ctx, this.sandbox, { kind: 'shell', toolName: 'shell_exec', title: 'Run shell command', argv: argvOf(ctx.task) });
  }
}
