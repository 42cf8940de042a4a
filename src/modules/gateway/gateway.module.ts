import { Module } from '@nestjs/common';
import { ProvidersModule } from '@modules/providers';
import { ChatSessionsModule } from '@modules/chat-sessions';
import { InferenceModule } from '@modules/inference';
import { CountTokensService } from './count-tokens.service';
import { IngressService } from './ingress.service';
import { ModelsService } from './models.service';
import { RateLimiterService } from './rate-limiter.service';
import { ResponsesRepository } from './responses.repository';
import { ResponsesRetention } from './responses-retention';
import { ResponsesService } from './responses.service';
import { SessionExchangeService } from './session-exchange.service';

/**
 * The /v1 edge: validation, rendering in the client's protocol, pass-through relay, rate limits, and the chat-session
 * recording of `/v1/chat/completions` with a `session_id`, and the Responses API with its stored responses. Model calls go through InferenceService; nothing imports
 * this module (its controllers are mounted by ApiModule).
 */
@Module({
  imports: [InferenceModule, ChatSessionsModule, ProvidersModule],
  providers: [
    CountTokensService,
    IngressService,
    ModelsService,
    RateLimiterService,
    SessionExchangeService,
    ResponsesRepository,
    ResponsesService,
    ResponsesRetention,
  ],
  exports: [CountTokensService, IngressService, ModelsService, SessionExchangeService, ResponsesService],
})
export class GatewayModule {}
