import { Global, Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';

/** A provider method marked with a decorator's metadata. */
export interface DeclaredMethod<M> {
  meta: M;
  /** `Class.method`, for the boot error naming both places when one name is declared twice. */
  where: string;
  /** The method, bound to its provider. */
  call: (...args: never[]) => unknown;
  /** How deep the provider's module sits in the import tree (Nest initialises the deepest first); 0 when unknown. */
  depth: number;
}

/** A provider whose class is marked with a decorator's metadata. */
export interface DeclaredClass<M, T = unknown> {
  meta: M;
  instance: T;
  where: string;
}

/**
 * What providers declare with decorators, found once the process's providers exist (`@JobHandler`, `@RetentionPruner`,
 * `@WorkerRequestHandler`, `@SystemStat`, …): the one scan over Nest's DiscoveryService that every such registry uses.
 * A provider reached under two tokens (a `useExisting` alias) is one provider. Each registry refuses its own duplicates
 * (`refuseTwice`), so a name declared twice is a boot error that names both places.
 */
@Injectable()
export class Declarations {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** Every provider method carrying `key`, in module order (the order Nest's container holds them). */
  methods<M>(key: string): DeclaredMethod<M>[] {
    const found: DeclaredMethod<M>[] = [];
    for (const { instance, depth } of this.instances()) {
      const target = instance as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
        const fn = target[method];
        if (typeof fn !== 'function') continue;
        const meta = this.reflector.get<M | undefined>(key, fn as () => unknown);
        if (meta === undefined) continue;
        found.push({ meta, where: `${instance.constructor.name}.${method}`, call: (fn as (...args: never[]) => unknown).bind(instance), depth });
      }
    }
    return found;
  }

  /** Every provider whose class carries `key` (inherited from a base class too). */
  classes<M, T = unknown>(key: string): DeclaredClass<M, T>[] {
    const found: DeclaredClass<M, T>[] = [];
    for (const { instance } of this.instances()) {
      const meta = this.reflector.get<M | undefined>(key, instance.constructor as new (...args: never[]) => unknown);
      if (meta !== undefined) found.push({ meta, instance: instance as T, where: instance.constructor.name });
    }
    return found;
  }

  private *instances(): Generator<{ instance: object; depth: number }> {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as unknown;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      seen.add(instance);
      yield { instance, depth: (wrapper.host as { distance?: number } | undefined)?.distance ?? 0 };
    }
  }
}

/** Throws `<what> "<name>" is declared twice: A.m, B.m` when two declarations share a name (a boot error). */
export function refuseTwice<D extends { where: string }>(declared: readonly D[], nameOf: (d: D) => string, what: string): void {
  const first = new Map<string, D>();
  for (const d of declared) {
    const name = nameOf(d);
    const twice = first.get(name);
    if (twice) throw new Error(`${what} "${name}" is declared twice: ${twice.where}, ${d.where}`);
    first.set(name, d);
  }
}

/** Declarations for every module of both roles (core, global: a registry in any module reads them). */
@Global()
@Module({ imports: [DiscoveryModule], providers: [Declarations], exports: [Declarations] })
export class DeclarationsModule {}
