import 'reflect-metadata';
import { SetMetadata } from '@nestjs/common';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations, refuseTwice } from './declarations';

const Marked = (name: string): MethodDecorator => SetMetadata('test:marked', name);
const Kind = (): ClassDecorator => SetMetadata('test:kind', true);

@Kind()
class Base {
  constructor(readonly n = 1) {}

  @Marked('base.read')
  read() {
    return this.n;
  }

  unmarked() {
    return 'untouched';
  }
}

/** Inherits its base's class metadata and its marked method. */
class Derived extends Base {
  @Marked('derived.write')
  write() {
    return this.n * 10;
  }
}

/** Wrappers as Nest's DiscoveryService hands them out: an instance and the module (with its depth) that provides it. */
const declarationsOf = (...wrappers: Array<{ instance: unknown; depth?: number }>): Declarations => {
  const providers = [...wrappers.map(({ instance, depth }) => ({ instance, host: depth === undefined ? undefined : { distance: depth } })), { instance: null }];
  const discovery = { getProviders: () => providers } as unknown as DiscoveryService;
  return new Declarations(discovery, new MetadataScanner(), new Reflector());
};

describe('Declarations', () => {
  it('finds marked methods of every provider, in provider order, bound to their instance, with their module depth', () => {
    const found = declarationsOf({ instance: new Base(2), depth: 3 }, { instance: { plain: true } }, { instance: new Derived(5), depth: 1 }).methods<string>(
      'test:marked',
    );
    expect(found.map((f) => [f.meta, f.where, f.depth])).toEqual([
      ['base.read', 'Base.read', 3],
      ['derived.write', 'Derived.write', 1],
      ['base.read', 'Derived.read', 1],
    ]);
    expect(found.map((f) => (f.call as () => number)())).toEqual([2, 50, 5]);
  });

  it('counts a provider reached under two tokens (a useExisting alias) once', () => {
    const one = new Base();
    expect(declarationsOf({ instance: one }, { instance: one }).methods('test:marked')).toHaveLength(1);
    expect(declarationsOf({ instance: one }, { instance: one }).classes('test:kind')).toHaveLength(1);
  });

  it('finds marked classes, the metadata inherited by a subclass too', () => {
    const base = new Base();
    const derived = new Derived();
    const found = declarationsOf({ instance: base }, { instance: {} }, { instance: derived }).classes<true, Base>('test:kind');
    expect(found.map((f) => [f.instance, f.where, f.meta])).toEqual([
      [base, 'Base', true],
      [derived, 'Derived', true],
    ]);
  });

  it('refuseTwice names both places of a name declared twice', () => {
    const found = declarationsOf({ instance: new Base() }, { instance: new Derived() }).methods<string>('test:marked');
    expect(() => refuseTwice(found, (f) => f.meta, 'marked method')).toThrow('marked method "base.read" is declared twice: Base.read, Derived.read');
    expect(() => refuseTwice(found.slice(0, 2), (f) => f.meta, 'marked method')).not.toThrow();
  });
});
