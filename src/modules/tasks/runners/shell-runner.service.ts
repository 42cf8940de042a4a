import { Inject, Injectable } from '@nestjs/common';
import { RunRunnerKind } from '../run-kind.decorator';
import { runCommandStep } from '../executors/command-step';
import { shellArgvOf } from '../executors/shell.executor';
import type { ExecutionContext, ExecutionOutcome, RunRunner } from '../run-executor';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';

/** Runs execution_kind=shell on a worker, under the sandbox. */
@Injectable()
@RunRunnerKind()
export class ShellRunnerService implements RunRunner {
  readonly kind = 'shell';

  constructor(@Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox) {}

  execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    return runCommandStep(ctx, this.sandbox, { kind: 'shell', toolName: 'shell_exec', title: 'Run shell command', argv: shellArgvOf(ctx.task) });
  }
}
