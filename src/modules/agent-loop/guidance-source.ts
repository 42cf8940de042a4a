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
 * Where guidance for a running agent comes from (docs/design.md §11.5): Agent Chat, on workers. The loop asks
 * before each model call; pending items are consumed in the loop's own transaction (the one that appends them to the
 * conversation and checkpoints it), so a crash leaves them either pending or consumed and in the conversation.
 */
export interface GuidanceSource {
  /** Cheap check outside any transaction: is guidance waiting for this run? */
  pendingFor(tenantId: string, runId: string): Promise<boolean>;
  /** Takes the run's pending guidance in `manager`'s transaction (oldest first), recording the receipt. */
  consumeIn(manager: EntityManager, at: { tenantId: string; runId: string; modelCallIndex: number }): Promise<ConsumedGuidance[]>;
}

/**
 * The token the agent loop injects its GuidanceSource with. Agent Chat provides it (AgentChatGuidanceModule, which the
 * worker role builds): that module is global because Agent Chat imports the agent loop, so the loop cannot import it. A
 * worker without it does not boot.
 */
export const GUIDANCE_SOURCE = Symbol('GUIDANCE_SOURCE');
