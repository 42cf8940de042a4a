import 'reflect-metadata';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations } from '@core/discovery/declarations';
import { DomainError } from '@core/http/domain-error';
import { TurnRuntimeKind, TurnRuntimes } from './turn-runtime';

@TurnRuntimeKind()
class ModelLike {
  readonly kind: string = 'model';
}

/** Like ExternalAgentTurnRuntime: a subclass of a marked runtime with its own kind. */
@TurnRuntimeKind()
class ExternalLike extends ModelLike {
  override readonly kind: string = 'external_agent';
}

/** A provider with a `kind` but no decorator: not a runtime. */
class Unmarked {
  readonly kind = 'agent';
}

const runtimesOf = (...instances: unknown[]): TurnRuntimes => {
  const discovery = { getProviders: () => instances.map((instance) => ({ instance })) } as unknown as DiscoveryService;
  const runtimes = new TurnRuntimes(new Declarations(discovery, new MetadataScanner(), new Reflector()));
  runtimes.onModuleInit();
  return runtimes;
};

describe('TurnRuntimes', () => {
  it('finds the @TurnRuntimeKind() providers by their kind, and nothing else', () => {
    const model = new ModelLike();
    const external = new ExternalLike();
    const runtimes = runtimesOf(model, new Unmarked(), external);
    expect(runtimes.get('model')).toBe(model);
    expect(runtimes.get('external_agent')).toBe(external);
    expect(runtimes.has('agent')).toBe(false);
  });

  it('a kind nobody declared answers 400 agent_chat.adapter_not_found', () => {
    const err = (() => {
      try {
        return runtimesOf(new ModelLike()).get('agent', 'codex');
      } catch (e) {
        return e;
      }
    })() as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect({ type: err.type, status: err.status }).toEqual({ type: 'agent_chat.adapter_not_found', status: 400 });
  });

  it('a kind declared twice is a boot error', () => {
    expect(() => runtimesOf(new ModelLike(), new ModelLike())).toThrow('agent chat runtime "model" registered twice');
  });
});
