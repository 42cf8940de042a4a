import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { busChannels, EventBus, type Unsubscribe } from '@core/bus';
import { rootLogger } from '@core/logging/logger';
import type { ChatMessageRow, ChatSessionRow } from './chat-rows';

export interface SessionSnapshot {
  session: ChatSessionRow;
  leaf: ChatMessageRow | null;
}

const MAX_ENTRIES = 10_000;

/**
 * The state each session was left in by this process's last `/v1` recording, so the next exchange of a
 * conversation needs no read before its upstream call. Never trusted for writes: the recording's guarded
 * statement only applies if the session is still exactly there (otherwise it runs under the lock). Edits
 * that the guard cannot see (system prompt, compaction, deletion) drop the entry in every process.
 */
@Injectable()
export class ChatSnapshotCacheService implements OnModuleInit, OnModuleDestroy {
  private readonly entries = new Map<string, SessionSnapshot>();
  private unsubscribe: Unsubscribe | undefined;

  constructor(@Inject(EventBus) private readonly bus: EventBus) {}

  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.bus.listen(busChannels.chatSessionChanged, (msg) => {
      const id = msg?.session_id;
      if (typeof id === 'string') this.entries.delete(id);
    });
    // Missed doorbells while the bus was down: start over.
    this.bus.onReconnect(() => this.entries.clear());
  }

  async onModuleDestroy(): Promise<void> {
    // Shutting down: the cache goes with the process.
    await this.unsubscribe?.().catch(() => undefined);
  }

  get(tenantId: string, sessionId: string): SessionSnapshot | undefined {
    const hit = this.entries.get(sessionId);
    return hit && hit.session.tenantId === tenantId ? hit : undefined;
  }

  set(snapshot: SessionSnapshot): void {
    const id = snapshot.session.id;
    this.entries.delete(id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, snapshot);
  }

  /** After a change the recording guard does not check (system prompt, compaction, deletion). */
  async changed(sessionIds: string[]): Promise<void> {
    for (const id of sessionIds) {
      this.entries.delete(id);
      await this.bus
        .send(busChannels.chatSessionChanged, { session_id: id })
        .catch((err: unknown) =>
          rootLogger().warn(
            { session_id: id, err: String(err) },
            'chat session change not announced; other processes may use a stale snapshot of it until their bus reconnects',
          ),
        );
    }
  }
}
