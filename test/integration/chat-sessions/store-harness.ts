import { openTestDatabase } from '../../support/database';
import 'reflect-metadata';

import { DataSource } from 'typeorm';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import type { AppConfig } from '@core/config/app-config';
import { chatConfig, ChatEnv } from '@core/config/groups/chat.env';

import { MemoryLiveStreamBuffer } from '@core/live-streams/memory-live-stream-buffer.adapter';
import { ChatExchangeRecorderService } from '@modules/chat-sessions/chat-exchange-recorder.service';
import { ChatInflightService } from '@modules/chat-sessions/chat-inflight.service';
import { ChatLineageService } from '@modules/chat-sessions/chat-lineage.service';
import { ChatSessionRepository } from '@modules/chat-sessions/chat-session.repository';
import { ChatSessionsService } from '@modules/chat-sessions/chat-sessions.service';
import { ChatSnapshotCacheService } from '@modules/chat-sessions/chat-snapshot-cache.service';
import { ChatTranscriptRepository } from '@modules/chat-sessions/chat-transcript.repository';
import { ChatTurnLedgerService } from '@modules/chat-sessions/chat-turn-ledger.service';

/** The chat store's services on a real database (Postgres scratch database or a fresh PGlite). */
export interface StoreHarness {
  backend: 'postgres' | 'pglite';
  dataSource: DataSource;
  config: AppConfig;
  sessions: ChatSessionsService;
  recorder: ChatExchangeRecorderService;
  ledger: ChatTurnLedgerService;
  lineage: ChatLineageService;
  inflight: ChatInflightService;
  buffer: MemoryLiveStreamBuffer;
  bus: InProcessEventBus;
  repo: ChatSessionRepository;
  rows<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function openStore(backend: 'postgres' | 'pglite', env: Partial<ChatEnv> = {}): Promise<StoreHarness> {
  const tdb = await openTestDatabase(backend, { poolSize: 60, prefix: 'hecate-chat-' });
  const { dataSource } = tdb;
  const config = { chat: chatConfig(env as ChatEnv) } as AppConfig;
  const repo = new ChatSessionRepository(dataSource);
  const transcripts = new ChatTranscriptRepository(dataSource);
  const ledger = new ChatTurnLedgerService(transcripts, config);
  const bus = new InProcessEventBus();
  const buffer = new MemoryLiveStreamBuffer(60_000);
  const inflight = new ChatInflightService(config, repo, ledger, bus, buffer);
  const cache = new ChatSnapshotCacheService(bus);
  await cache.onModuleInit();
  return {
    backend,
    dataSource,
    config,
    sessions: new ChatSessionsService(repo, transcripts, config, cache),
    recorder: new ChatExchangeRecorderService(repo, transcripts, config, cache),
    ledger,
    lineage: new ChatLineageService(transcripts, config, cache),
    inflight,
    buffer,
    bus,
    repo,
    rows: (sql, params = []) => dataSource.query(sql, params),
    async close() {
      await inflight.onModuleDestroy();
      await cache.onModuleDestroy();
      await buffer.close();
      await bus.close();
      await tdb.close();
    },
  };
}

export const call = (model = 'gpt-4o-mini', extra: Partial<{ provider: string; costMicrosUsd: number }> = {}) => ({
  requestId: `req_${Math.random().toString(36).slice(2)}`,
  provider: extra.provider ?? 'openai',
  providerKind: 'cloud',
  model,
  requestedModel: model,
  routeReason: 'requested_model',
  costMicrosUsd: extra.costMicrosUsd ?? 12,
  promptTokens: 10,
  completionTokens: 3,
});

export const textReply = (text: string) => ({ text, content_blocks: [{ type: 'text', text }], tool_calls: [] });
