import 'reflect-metadata';
import type { DynamicModule, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import type { CoreResources } from '@core/core.module';
import { ApiModule } from '../../src/api.module';
import { WorkerModule } from '../../src/worker.module';
import { GatewayModule } from '@modules/gateway/gateway.module';
import { TaskRunnersModule } from '@modules/tasks/runners/task-runners.module';
import { SandboxService } from '@modules/workspaces/sandbox/sandbox.service';
import { McpClientPool } from '@modules/mcp/mcp-client-pool.service';
import { McpWorkerModule } from '@modules/mcp/mcp-worker.module';

type Node = Type | DynamicModule | Promise<DynamicModule>;

/** Every module class a role's module tree builds, and every provider class they declare. */
function tree(root: DynamicModule): { modules: Set<Type>; providers: Set<unknown> } {
  const modules = new Set<Type>();
  const providers = new Set<unknown>();
  const visit = (node: Node) => {
    if (node instanceof Promise) return;
    const dynamic = 'module' in node ? node : undefined;
    const cls = (dynamic ? dynamic.module : node) as Type;
    if (modules.has(cls) && !dynamic) return;
    modules.add(cls);
    const imports = [...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, cls) as Node[]) ?? []), ...((dynamic?.imports as Node[]) ?? [])];
    for (const p of [...((Reflect.getMetadata(MODULE_METADATA.PROVIDERS, cls) as unknown[]) ?? []), ...(dynamic?.providers ?? [])]) providers.add(p);
    for (const i of imports) visit(i);
  };
  visit(root);
  return { modules, providers };
}

const core = {} as CoreResources;

describe('roles build what they use (STYLE rule 16)', () => {
  it('the api role builds no worker-only module: no sandbox, no tool runner', () => {
    const api = tree(ApiModule.forRoot(core));
    expect(api.modules.has(TaskRunnersModule)).toBe(false);
    expect(api.providers.has(SandboxService)).toBe(false);
    expect(api.modules.has(McpWorkerModule)).toBe(false);
    expect(api.providers.has(McpClientPool)).toBe(false);
    for (const m of WorkerModule.workerOnlyModules) expect(api.modules.has(m)).toBe(false);
  });

  it('the worker role builds the worker-only modules and not the /v1 ingress', () => {
    const worker = tree(WorkerModule.forRoot(core));
    expect(worker.modules.has(TaskRunnersModule)).toBe(true);
    expect(worker.providers.has(SandboxService)).toBe(true);
    expect(worker.providers.has(McpClientPool)).toBe(true);
    expect(worker.modules.has(GatewayModule)).toBe(false);
    for (const m of ApiModule.apiOnlyModules) expect(worker.modules.has(m)).toBe(false);
  });

  it('SandboxService starts nothing in its constructor: the bubblewrap probe waits for the init hook', () => {
    const s = new SandboxService({ tasks: { sandbox: 'bwrap' } } as never);
    expect(() => s.layer).toThrow(/before the worker initialised it/);
  });
});
