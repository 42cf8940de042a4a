import 'reflect-metadata';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations } from '@core/discovery/declarations';
import { RetentionPruner } from './retention-pruner.decorator';
import { RetentionPruners } from './retention-pruners';

class Tables {
  @RetentionPruner('first_table')
  first() {
    return Promise.resolve({ deleted: 1 });
  }

  @RetentionPruner('second_table')
  second() {
    return Promise.resolve({ deleted: 2 });
  }

  notAPruner() {
    return 'untouched';
  }
}

class Elsewhere {
  constructor(private readonly removed: number) {}

  @RetentionPruner('elsewhere')
  prune() {
    return Promise.resolve({ removed: this.removed });
  }
}

class Again {
  @RetentionPruner('first_table')
  prune() {
    return Promise.resolve({});
  }
}

const discover = (...instances: unknown[]): RetentionPruners => {
  const discovery = { getProviders: () => [...instances.map((instance) => ({ instance })), { instance: null }] } as unknown as DiscoveryService;
  const pruners = new RetentionPruners(new Declarations(discovery, new MetadataScanner(), new Reflector()));
  pruners.onModuleInit();
  return pruners;
};

describe('RetentionPruners', () => {
  it('finds every @RetentionPruner method of every provider, in order, bound to its instance', async () => {
    const pruners = discover(new Tables(), { plain: true }, new Elsewhere(7));
    expect(pruners.all().map((p) => [p.name, p.where])).toEqual([
      ['first_table', 'Tables.first'],
      ['second_table', 'Tables.second'],
      ['elsewhere', 'Elsewhere.prune'],
    ]);
    expect(await pruners.all()[2].prune()).toEqual({ removed: 7 });
  });

  it('refuses one name declared twice (a boot error naming both)', () => {
    expect(() => discover(new Tables(), new Again())).toThrow('retention pruner "first_table" is declared twice: Tables.first, Again.prune');
  });
});
