import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { busChannels, busRequest, EventBus } from '@core/bus';
import { RunQueue } from '@core/queue/run-queue.port';
import type { CacheReplyMessage } from '@core/bus';

const COLLECT_TIMEOUT_MS = 1_000;

/**
 * `GET /hecate/v1/system/mcp/cache`: the MCP client caches of the whole deployment. Asks every worker over the bus
 * and sums the answers that arrive until each live worker answered or a short deadline passed (`workers` says how
 * many did). In embedded mode the one process answers itself.
 */
@Injectable()
export class McpCacheStatsService {
  constructor(
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async collect(timeoutMs = COLLECT_TIMEOUT_MS) {
    const id = randomUUID();
    const replies = new Map<string, CacheReplyMessage>();
    // Queue unreachable: ask without waiting, as when no worker is live.
    const expected = await this.queue.workerCount().catch(() => 0);
    await busRequest(this.bus, {
      reply: busChannels.mcpCacheReply.of(id),
      send: () => this.bus.send(busChannels.mcpCacheRequest, { id }),
      // No live worker: nobody would answer.
      timeoutMs: expected > 0 ? timeoutMs : 0,
      accept: (reply) => (replies.set(reply.worker, reply), true),
      enough: () => expected > 0 && replies.size >= expected,
    });
    const sum = (k: 'entries' | 'in_use' | 'idle') => [...replies.values()].reduce((n, r) => n + (Number(r[k]) || 0), 0);
    return { checked_at: new Date().toISOString(), configured: true, entries: sum('entries'), in_use: sum('in_use'), idle: sum('idle'), workers: replies.size };
  }
}
