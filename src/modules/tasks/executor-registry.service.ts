import { Injectable, OnModuleInit } from '@nestjs/common';
import { Declarations } from '@core/discovery/declarations';
import type { RunExecutor, RunRunner } from './run-executor';
import { RUN_EXECUTOR_METADATA, RUN_RUNNER_METADATA } from './run-kind.decorator';

/**
 * Execution kinds: their executors (validate, preflight, plan; both roles; `@RunExecutorKind()`) and their runners
 * (execute; `@RunRunnerKind()`, built only where a worker-only module is). Both are found among the process's providers
 * at startup; a kind declared twice is a boot error.
 */
@Injectable()
export class ExecutorRegistry implements OnModuleInit {
  private readonly executors = new Map<string, RunExecutor>();
  private readonly runners = new Map<string, RunRunner>();

  constructor(private readonly declarations: Declarations) {}

  onModuleInit(): void {
    for (const { instance } of this.declarations.classes<true, RunExecutor>(RUN_EXECUTOR_METADATA)) this.register(instance);
    for (const { instance } of this.declarations.classes<true, RunRunner>(RUN_RUNNER_METADATA)) this.registerRunner(instance);
  }

  private register(executor: RunExecutor): void {
    if (this.executors.has(executor.kind)) throw new Error(`execution kind "${executor.kind}" registered twice`);
    this.executors.set(executor.kind, executor);
  }

  private registerRunner(runner: RunRunner): void {
    if (this.runners.has(runner.kind)) throw new Error(`runner for execution kind "${runner.kind}" registered twice`);
    this.runners.set(runner.kind, runner);
  }

  get(kind: string): RunExecutor | undefined {
    return this.executors.get(kind);
  }

  runner(kind: string): RunRunner | undefined {
    return this.runners.get(kind);
  }

  kinds(): string[] {
    return [...this.executors.keys()];
  }
}
