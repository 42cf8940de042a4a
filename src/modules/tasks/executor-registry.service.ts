import { Injectable } from '@nestjs/common';
import type { RunExecutor } from './run-executor';

/** Executors by execution_kind. A kind registered twice is a boot error. */
@Injectable()
export class ExecutorRegistry {
  private readonly executors = new Map<string, RunExecutor>();

  register(executor: RunExecutor): void {
    if (this.executors.has(executor.kind)) throw new Error(`execution kind "${executor.kind}" registered twice`);
    this.executors.set(executor.kind, executor);
  }

  get(kind: string): RunExecutor | undefined {
    return this.executors.get(kind);
  }

  kinds(): string[] {
    return [...this.executors.keys()];
  }
}
