import { Module, OnModuleInit } from '@nestjs/common';
import { ProvidersModule } from '@modules/providers';
import { RetentionService, TasksModule } from '@modules/tasks';
import { AppConfig } from '@core/config/app-config';
import { ChatSessionsModule } from '@modules/chat-sessions';
import { InferenceModule } from '@modules/inference';
import { IngressService } from './ingress.service';
import { ModelsService } from './models.service';
import { RateLimiterService } from './rate-limiter.service';
import { ResponsesRepository } from './responses.repository';
import { ResponsesService } from './responses.service';
import { SessionExchangeService } from './session-exchange.service';

/**
 * The /v1 edge: validation, rendering in the client's protocol, pass-through relay, rate limits, and the chat-session
 * recording of `/v1/chat/completions` with a `session_id`, and the Responses API with its stored responses. Model calls go through InferenceService; nothing imports
 * this module (its controllers are mounted by ApiModule).
 */
@Module({
  imports: [InferenceModule, ChatSessionsModule, ProvidersModule, TasksModule],
  providers: [IngressService, ModelsService, RateLimiterService, SessionExchangeService, ResponsesRepository, ResponsesService],
  exports: [IngressService, ModelsService, SessionExchangeService, ResponsesService],
})
export class GatewayModule implements OnModuleInit {
  constructor(
    private readonly config: AppConfig,
    private readonly retention: RetentionService,
    private readonly responses: ResponsesRepository,
  ) {}

  onModuleInit(): void {
    // Stored /v1/responses responses join the retention sweep (GATEWAY_RETENTION_RESPONSES_MAX_AGE / _MAX_COUNT).
    const { maxAgeMs, maxCount } = this.config.tasks.retention.responses;
    this.retention.addPruner('responses', async () => ({
      responses: await this.responses.prune(new Date(Date.now() - maxAgeMs), maxCount),
      max_age_ms: maxAgeMs,
      max_count: maxCount,
    }));
  }
}
