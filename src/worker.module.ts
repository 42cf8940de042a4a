import { DynamicModule, Module } from '@nestjs/common';
import { CoreModule, CoreResources } from '@core/core.module';
import { JobDispatcher } from '@core/queue/job-dispatcher';
import { QueueConsumerService } from '@core/queue/queue-consumer.service';
import { QueueProbeJob } from '@core/health/queue-probe.job';
import { DOMAIN_MODULES } from './domain.modules';
import { WorkerRequestJob } from '@core/lease';
import { RunJob } from '@modules/tasks';
import { TaskRunnersModule } from '@modules/tasks';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { AgentLoopWorkerModule } from '@modules/agent-loop';
import { McpWorkerModule } from '@modules/mcp';
import { AgentChatGuidanceModule, AgentChatTurnJob, AgentChatWorkerModule } from '@modules/agent-chat';
import { AgentAdaptersWorkerModule } from '@modules/agent-adapters';
import { ExternalAgentsWorkerModule } from '@modules/external-agents';
import { SchedulesWorkerModule } from '@modules/schedules';
import { WebhooksWorkerModule } from '@modules/webhooks';
import { BudgetsWorkerModule } from '@modules/budgets';

/** The worker role: job processors are provided here and nowhere else (docs/style.md rule 1). */
@Module({})
export class WorkerModule {
  static processors = [QueueProbeJob, RunJob, WorkerRequestJob, AgentChatTurnJob];
  /**
   * Modules only the worker role builds (docs/style.md rule 16, docs/design.md §11.2): the command sandbox, tool runners, MCP
   * clients, ACP adapter processes. The api role never constructs them.
   */
  static workerOnlyModules = [
    WorkspacesWorkerModule,
    TaskRunnersModule,
    McpWorkerModule,
    AgentLoopWorkerModule,
    AgentAdaptersWorkerModule,
    ExternalAgentsWorkerModule,
    AgentChatWorkerModule,
    AgentChatGuidanceModule,
    SchedulesWorkerModule,
    WebhooksWorkerModule,
    BudgetsWorkerModule,
  ];

  static forRoot(core: CoreResources, options: { standalone: boolean } = { standalone: true }): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...(options.standalone ? [CoreModule.forRoot(core)] : []), ...DOMAIN_MODULES, ...WorkerModule.workerOnlyModules],
      providers: [JobDispatcher, QueueConsumerService, ...WorkerModule.processors],
    };
  }
}
