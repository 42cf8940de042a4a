import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ExecutorRegistry } from '../executor-registry.service';
import { runCommandStep } from '../executors/command-step';
import { shellArgvOf } from '../executors/shell.executor';
import type { ExecutionContext, ExecutionOutcome, RunRunner } from '../run-executor';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';

/** Runs execution_kind=shell on a worker, under the sandbox. */
@Injectable()
export class ShellRunnerService implements RunRunner, OnModuleInit {
  readonly kind = 'shell';

  constructor(
    private readonly registry: ExecutorRegistry,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
  ) {}

  onModuleInit(): void {
    this.registry.registerRunner(this);
  }

  execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    return runCommandStep(ctx, this.sandbox, { kind: 'shell', toolName: 'shell_exec', title: 'Run shell command', argv: shellArgvOf(ctx.task) });
  }
}
