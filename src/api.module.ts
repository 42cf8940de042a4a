import { DynamicModule, Module } from '@nestjs/common';
import { ApiKeysController } from '@core/http/auth/api-keys.controller';
import { AuthModule } from '@core/http/auth/auth.module';
import { CallerController } from '@core/http/auth/caller.controller';
import { CoreModule, CoreResources } from '@core/core.module';
import { HealthController } from '@core/health/health.controller';
import { SystemController } from '@core/health/system.controller';
import { ChatSessionsController } from '@modules/chat-sessions';
import { ChatTurnsController } from '@modules/chat-sessions';
import { QueueProbesController } from '@core/health/queue-probes.controller';
import { ChatCompletionsController } from '@modules/gateway';
import { GatewayModule } from '@modules/gateway';
import { MessagesController } from '@modules/gateway';
import { ResponsesController } from '@modules/gateway';
import { ModelsController } from '@modules/gateway';
import { ProvidersController } from '@modules/providers';
import { ProviderSettingsController } from '@modules/providers';
import { ModelCapabilitiesController } from '@modules/providers';
import { PricingController } from '@modules/providers';
import { TracesController, UsageController } from '@modules/inference';
import { DOMAIN_MODULES } from './domain.modules';
import { EventsController } from '@modules/events';
import { RetentionController } from '@modules/retention';
import { TaskRunsController } from '@modules/tasks';
import { TasksController } from '@modules/tasks';
import { AgentLoopRunsController } from '@modules/agent-loop';
import { McpController } from '@modules/mcp';
import { McpServerController, McpServerModule } from '@modules/mcp-server';
import { AgentChatApprovalsController, AgentChatController, WorkspaceDialogController, OptimizeInputController } from '@modules/agent-chat';
import { AgentAdaptersController } from '@modules/agent-adapters';
import { AgentsController } from '@modules/agents';
import { SchedulesController } from '@modules/schedules';
import { WebhooksController } from '@modules/webhooks';
import { BudgetsController } from '@modules/budgets';

/** The HTTP role: every controller is mounted here and nowhere else (docs/style.md rule 1). */
@Module({})
export class ApiModule {
  static controllers = [
    TasksController,
    AgentLoopRunsController,
    AgentChatController,
    AgentChatApprovalsController,
    WorkspaceDialogController,
    OptimizeInputController,
    AgentAdaptersController,
    AgentsController,
    SchedulesController,
    WebhooksController,
    BudgetsController,
    TaskRunsController,
    EventsController,
    RetentionController,
    HealthController,
    SystemController,
    ApiKeysController,
    CallerController,
    QueueProbesController,
    ChatSessionsController,
    ChatTurnsController,
    ChatCompletionsController,
    MessagesController,
    ResponsesController,
    ModelsController,
    ProvidersController,
    ProviderSettingsController,
    ModelCapabilitiesController,
    PricingController,
    UsageController,
    TracesController,
    McpController,
    McpServerController,
  ];

  /** Modules only the api role builds: the edges (the /v1 ingress, the MCP server at /mcp). */
  static apiOnlyModules = [GatewayModule, McpServerModule];

  static forRoot(core: CoreResources): DynamicModule {
    return {
      module: ApiModule,
      imports: [CoreModule.forRoot(core), AuthModule, ...DOMAIN_MODULES, ...ApiModule.apiOnlyModules],
      controllers: ApiModule.controllers,
    };
  }
}
