import { DynamicModule, Module } from '@nestjs/common';
import { ApiKeysController } from '@core/auth/api-keys.controller';
import { AuthModule } from '@core/auth/auth.module';
import { CoreModule, CoreResources } from '@core/core.module';
import { HealthController } from '@core/health/health.controller';
import { SystemController } from '@core/health/system.controller';
import { ChatSessionsController } from '@modules/chat-sessions/chat-sessions.controller';
import { ChatTurnsController } from '@modules/chat-sessions/chat-turns.controller';
import { QueueProbesController } from '@modules/system/queue-probes.controller';
import { ChatCompletionsController } from '@modules/gateway/chat-completions.controller';
import { GatewayModule } from '@modules/gateway/gateway.module';
import { MessagesController } from '@modules/gateway/messages.controller';
import { ModelsController } from '@modules/gateway/models.controller';
import { ProvidersController } from '@modules/providers/providers.controller';
import { ProviderSettingsController } from '@modules/providers/provider-settings.controller';
import { ModelCapabilitiesController } from '@modules/providers/model-capabilities.controller';
import { PricingController } from '@modules/providers/pricing.controller';
import { UsageController } from '@modules/usage/usage.controller';
import { TracesController } from '@modules/usage/traces.controller';
import { DOMAIN_MODULES } from './domain.modules';
import { EventsController } from '@modules/events/events.controller';
import { RetentionController } from '@modules/tasks/retention.controller';
import { TaskRunsController } from '@modules/tasks/task-runs.controller';
import { TasksController } from '@modules/tasks/tasks.controller';

/** The HTTP role: every controller is mounted here and nowhere else (STYLE rule 1). */
@Module({})
export class ApiModule {
  static controllers = [
    TasksController,
    TaskRunsController,
    EventsController,
    RetentionController,
    HealthController,
    SystemController,
    ApiKeysController,
    QueueProbesController,
    ChatSessionsController,
    ChatTurnsController,
    ChatCompletionsController,
    MessagesController,
    ModelsController,
    ProvidersController,
    ProviderSettingsController,
    ModelCapabilitiesController,
    PricingController,
    UsageController,
    TracesController,
  ];

  /** Modules only the api role builds: the edges (the /v1 ingress; later the MCP server). */
  static apiOnlyModules = [GatewayModule];

  static forRoot(core: CoreResources): DynamicModule {
    return {
      module: ApiModule,
      imports: [CoreModule.forRoot(core), AuthModule, ...DOMAIN_MODULES, ...ApiModule.apiOnlyModules],
      controllers: ApiModule.controllers,
    };
  }
}
