import { Module } from '@nestjs/common';
import { InferenceModule } from '@modules/inference';
import { ProvidersModule } from '@modules/providers';
import { ChatCompactionService } from './chat-compaction.service';
import { ChatExchangeRecorderService } from './chat-exchange-recorder.service';
import { ChatGenerationService } from './chat-generation.service';
import { ChatInflightService } from './chat-inflight.service';
import { ChatLineageService } from './chat-lineage.service';
import { ChatSessionRepository } from './chat-session.repository';
import { ChatSessionsService } from './chat-sessions.service';
import { ChatSnapshotCacheService } from './chat-snapshot-cache.service';
import { ChatTranscriptRepository } from './chat-transcript.repository';
import { ChatTurnLedgerService } from './chat-turn-ledger.service';
import { ChatTurnsService } from './chat-turns.service';

/** Chat sessions: the two-stream store, message trees, stop, compression lineage. */
@Module({
  imports: [InferenceModule, ProvidersModule],
  providers: [
    ChatSnapshotCacheService,
    ChatSessionRepository,
    ChatTranscriptRepository,
    ChatSessionsService,
    ChatExchangeRecorderService,
    ChatTurnLedgerService,
    ChatInflightService,
    ChatLineageService,
    ChatGenerationService,
    ChatCompactionService,
    ChatTurnsService,
  ],
  exports: [ChatSessionsService, ChatInflightService, ChatTurnsService, ChatCompactionService, ChatExchangeRecorderService],
})
export class ChatSessionsModule {}
