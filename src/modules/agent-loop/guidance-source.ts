import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** One guidance item taken by a model call, with the transcript message it became (its receipt). */
export interface ConsumedGuidance {
  guidance_id: string;
  content: string;
  metadata: Record<string, unknown>;
  message_id: string;
  turn_id: string;
}

/**
 * Where guidance for a running agent comes from (docs/design.md §11.5): Agent Chat registers itself on workers. The loop asks
 * before each model call; pending items are consumed in the loop's own transaction (the one that appends them to the
 * conversation and checkpoints it), so a crash leaves them either pending or consumed and in the conversation.
 */
export interface GuidanceSource {
  /** Cheap check outside any transaction: is guidance waiting for this run? */
  pendingFor(tenantId: string, runId: string): Promise<boolean>;
  /** Takes the run's pending guidance in `manager`'s transaction (oldest first), recording the receipt. */
  consumeIn(manager: EntityManager, at: { tenantId: string; runId: string; modelCallIndex: number }): Promise<ConsumedGuidance[]>;
}

/** The registered guidance source, if any (none: the loop never asks). */
@Injectable()
export class GuidanceRegistry {
  private current: GuidanceSource | undefined;

  register(source: GuidanceSource): void {
    this.current = source;
  }

  get source(): GuidanceSource | undefined {
    return this.current;
  }
}
