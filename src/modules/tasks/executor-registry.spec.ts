import 'reflect-metadata';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations } from '@core/discovery/declarations';
import { ExecutorRegistry } from './executor-registry.service';
import { RunExecutorKind, RunRunnerKind } from './run-kind.decorator';

@RunExecutorKind()
class ShellKind {
  readonly kind = 'shell';
}

@RunExecutorKind()
class FileKind {
  readonly kind = 'file';
}

@RunRunnerKind()
class ShellRunner {
  readonly kind = 'shell';
}

/** A provider with a `kind` but no decorator: not an execution kind. */
class Unmarked {
  readonly kind = 'unmarked';
}

const discover = (...instances: unknown[]): ExecutorRegistry => {
  const discovery = { getProviders: () => [...instances.map((instance) => ({ instance })), { instance: null }] } as unknown as DiscoveryService;
  const registry = new ExecutorRegistry(new Declarations(discovery, new MetadataScanner(), new Reflector()));
  registry.onModuleInit();
  return registry;
};

describe('ExecutorRegistry', () => {
  it('finds the @RunExecutorKind and @RunRunnerKind providers by their kind, and nothing else', () => {
    const shell = new ShellKind();
    const runner = new ShellRunner();
    const registry = discover(shell, new FileKind(), runner, new Unmarked());
    expect(registry.kinds()).toEqual(['shell', 'file']);
    expect(registry.get('shell')).toBe(shell);
    expect(registry.runner('shell')).toBe(runner);
    expect(registry.runner('file')).toBeUndefined();
    expect(registry.get('unmarked')).toBeUndefined();
  });

  it('counts a provider listed twice (one instance) once', () => {
    const shell = new ShellKind();
    expect(discover(shell, shell).kinds()).toEqual(['shell']);
  });

  it('a kind declared twice is a boot error', () => {
    expect(() => discover(new ShellKind(), new ShellKind())).toThrow('execution kind "shell" registered twice');
    expect(() => discover(new ShellRunner(), new ShellRunner())).toThrow('runner for execution kind "shell" registered twice');
  });

  it('a process without runners (the api) has executors and no runner', () => {
    const registry = discover(new ShellKind(), new FileKind());
    expect(registry.runner('shell')).toBeUndefined();
    expect(registry.get('file')).toBeInstanceOf(FileKind);
  });
});
