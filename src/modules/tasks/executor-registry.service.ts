import { Injectable } from '@nestjs/common';
import type { RunExecutor, RunRunner } from './run-executor';

/**
 * Execution kinds: their executors (validate, preflight, plan; both roles) and their runners (execute; registered
 * only where a worker-only module is built). A kind registered twice is a boot error.
 */
@Injectable()
export class ExecutorRegistry {
  private readonly executors = new Map<string, RunExecutor>();
  private readonly runners = new Map<string, RunRunner>();

  register(executor: RunExecutor): void {
    if (this.executors.has(executor.kind)) throw new Error(`execution kind "${executor.kind}" registered twice`);
    this.executors.set(executor.kind, executor);
  }

  registerRunner(runner: RunRunner): void {
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
