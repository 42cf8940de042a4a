import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { WORKER_REQUEST_KINDS, type WorkerRequestKind } from '@contracts/worker-requests';
import { Declarations } from '@core/discovery/declarations';
import { WorkerRequestHandler } from './worker-request-handler.decorator';
import { registerWorkerRequestHandlers, WorkerRequestRegistryError } from './worker-request-handlers';
import type { AskOptions, WorkerRequests } from './worker-requests';

const ALL = Object.keys(WORKER_REQUEST_KINDS) as WorkerRequestKind[];

/** A provider named `name` with one @WorkerRequestHandler method per kind (the method is named after its kind). */
function provider(name: string, kinds: readonly string[]): object {
  const cls = { [name]: class {} }[name];
  for (const kind of kinds) {
    Object.defineProperty(cls.prototype, kind, { value: async () => ({ by: name }), configurable: true, writable: true });
    WorkerRequestHandler(kind as WorkerRequestKind)(cls.prototype, kind, Object.getOwnPropertyDescriptor(cls.prototype, kind)!);
  }
  return new cls();
}

/** A worker's boot over `providers` (as Nest's DiscoveryService lists them) against the real registry: what it registered. */
function boot(...providers: object[]): Array<{ kind: string; input: boolean | undefined; where: string | undefined }> {
  const discovery = { getProviders: () => providers.map((instance) => ({ instance })) } as unknown as DiscoveryService;
  const registered: Array<{ kind: string; input: boolean | undefined; where: string | undefined }> = [];
  registerWorkerRequestHandlers(
    { register: (kind, _run, opts = {}) => registered.push({ kind, input: opts.input, where: opts.where }) },
    new Declarations(discovery, new MetadataScanner(), new Reflector()),
    WORKER_REQUEST_KINDS,
  );
  return registered;
}

/** Compile-time only (never called): `tsc` fails when an unknown kind or a wrong payload stops being a type error. */
const typeChecks = (requests: WorkerRequests, opts: AskOptions) => [
  // @ts-expect-error not a kind of the registry
  requests.ask('t', 'workspace.rename', {}, opts),
  // @ts-expect-error the payload of workspace.remove is { paths: string[] }
  requests.ask('t', 'workspace.remove', { path: 'x' }, opts),
  // @ts-expect-error not a kind of the registry
  WorkerRequestHandler('workspace.rename'),
];
void typeChecks;

// docs/style.md rule 3: a worker refuses to boot when a kind of the registry has no handler or two.
describe('worker request handlers at a worker boot', () => {
  it('registers one handler per kind of the registry, with the input flag the registry gives it', () => {
    const registered = boot(provider('Workspace', ALL.slice(0, 4)), provider('Rest', ALL.slice(4)));
    expect(registered.map((r) => r.kind).sort()).toEqual([...ALL].sort());
    expect(registered.filter((r) => r.input).map((r) => r.kind)).toEqual(['mcp.probe']);
    expect(registered.find((r) => r.kind === ALL[0])!.where).toBe(`Workspace.${ALL[0]}`);
  });

  it('refuses to boot when a kind of the registry has no handler, naming it, and registers nothing', () => {
    const missing = ALL.filter((k) => k !== 'agent_chat.revert' && k !== 'mcp.probe');
    let registered = 0;
    const discovery = { getProviders: () => [{ instance: provider('Handlers', missing) }] } as unknown as DiscoveryService;
    const run = () =>
      registerWorkerRequestHandlers(
        { register: () => void registered++ },
        new Declarations(discovery, new MetadataScanner(), new Reflector()),
        WORKER_REQUEST_KINDS,
      );
    expect(run).toThrow(WorkerRequestRegistryError);
    expect(run).toThrow(
      'worker request registry is inconsistent:\n  - worker request kind "agent_chat.revert" has no handler\n  - worker request kind "mcp.probe" has no handler',
    );
    expect(registered).toBe(0);
  });

  it('refuses to boot when a kind has two handlers, naming both', () => {
    expect(() => boot(provider('First', ALL), provider('Second', ['workspace.remove']))).toThrow(
      'worker request kind "workspace.remove" is declared twice: First.workspace.remove, Second.workspace.remove',
    );
  });

  it('refuses a handler of a kind the registry does not have', () => {
    expect(() => boot(provider('All', ALL), provider('Stray', ['workspace.rename']))).toThrow(
      'worker request kind "workspace.rename" is not in the registry: Stray.workspace.rename',
    );
  });

  it('a worker with no handler at all names every kind of the registry', () => {
    const err = (() => {
      try {
        boot();
      } catch (e) {
        return e as Error;
      }
      throw new Error('the boot did not fail');
    })();
    expect(err.message.split('\n').slice(1)).toEqual(ALL.map((k) => `  - worker request kind "${k}" has no handler`));
  });
});
