import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { type PruneResult, RETENTION_PRUNER_METADATA } from './retention-pruner.decorator';

export interface DiscoveredPruner {
  name: string;
  /** `Class.method`, for the error when two pruners claim one name. */
  where: string;
  prune(): Promise<PruneResult>;
}

/** Finds every @RetentionPruner of this process at startup, in module order; a name declared twice is a boot error. */
@Injectable()
export class RetentionPruners implements OnModuleInit {
  private found: DiscoveredPruner[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const found: DiscoveredPruner[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      for (const method of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
        const fn = instance[method];
        if (typeof fn !== 'function') continue;
        const name = this.reflector.get<string | undefined>(RETENTION_PRUNER_METADATA, fn as () => unknown);
        if (!name) continue;
        const where = `${instance.constructor.name}.${method}`;
        const twice = found.find((p) => p.name === name);
        if (twice) throw new Error(`retention pruner "${name}" is declared twice: ${twice.where}, ${where}`);
        found.push({ name, where, prune: (fn as () => Promise<PruneResult>).bind(instance) });
      }
    }
    this.found = found;
  }

  all(): readonly DiscoveredPruner[] {
    return this.found;
  }
}
