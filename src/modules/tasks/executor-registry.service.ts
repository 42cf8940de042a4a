import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
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

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as object | undefined;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      const cls = instance.constructor as new (...args: never[]) => unknown;
      if (this.reflector.get<boolean | undefined>(RUN_EXECUTOR_METADATA, cls)) this.register(instance as RunExecutor);
      if (this.reflector.get<boolean | undefined>(RUN_RUNNER_METADATA, cls)) this.registerRunner(instance as RunRunner);
    }
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
