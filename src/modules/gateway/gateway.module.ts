import { Module } from '@nestjs/common';
import { ProvidersModule } from '@modules/providers';
import { ChatSessionsModule } from '@modules/chat-sessions';
import { InferenceModule } from '@modules/inference';
import { IngressService } from './ingress.service';
import { ModelsService } from './models.service';
import { RateLimiterService } from './rate-limiter.service';
import { SessionExchangeService } from './session-exchange.service';

/**
 * The /v1 edge: validation, rendering in the client's protocol, pass-through relay, rate limits, and the chat-session
 * recording of `/v1/chat/completions` with a `session_id`. Model calls go through InferenceService; nothing imports
 * this module (its controllers are mounted by ApiModule).
 */
@Module({
  imports: [InferenceModule, ChatSessionsModule, ProvidersModule],
  providers: [IngressService, ModelsService, RateLimiterService, SessionExchangeService],
  exports: [IngressService, ModelsService, SessionExchangeService],
})
export class GatewayModule {}
