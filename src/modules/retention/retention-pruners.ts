import { Injectable, OnModuleInit } from '@nestjs/common';
import { Declarations, refuseTwice } from '@core/discovery/declarations';
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

  constructor(private readonly declarations: Declarations) {}

  onModuleInit(): void {
    const found = this.declarations
      .methods<string>(RETENTION_PRUNER_METADATA)
      .map(({ meta: name, where, call }): DiscoveredPruner => ({ name, where, prune: call as () => Promise<PruneResult> }));
    refuseTwice(found, (p) => p.name, 'retention pruner');
    this.found = found;
  }

  all(): readonly DiscoveredPruner[] {
    return this.found;
  }
}
