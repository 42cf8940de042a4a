import { ChatSessionsModule } from '@modules/chat-sessions';
import { InferenceModule } from '@modules/inference';
import { ProvidersModule } from '@modules/providers';
import { ApprovalsModule } from '@modules/approvals';
import { EventsModule } from '@modules/events';
import { TasksModule } from '@modules/tasks';
import { WorkspacesModule } from '@modules/workspaces';
import { RetentionModule } from '@modules/retention';
import { AgentLoopModule } from '@modules/agent-loop';
import { McpModule } from '@modules/mcp';
import { AgentChatModule } from '@modules/agent-chat';
import { AgentAdaptersModule } from '@modules/agent-adapters';
import { ExternalAgentsModule } from '@modules/external-agents';
import { AgentsModule } from '@modules/agents';
import { SchedulesModule } from '@modules/schedules';
import { WebhooksModule } from '@modules/webhooks';
import { BudgetsModule } from '@modules/budgets';

/**
 * Domain modules both roles load (services, repositories, entities). Controllers and the edges (`gateway`) are
 * added by ApiModule, job processors and worker-only modules by WorkerModule.
 */
export const DOMAIN_MODULES = [
  ProvidersModule,
  BudgetsModule,
  InferenceModule,
  ChatSessionsModule,
  EventsModule,
  ApprovalsModule,
  WorkspacesModule,
  TasksModule,
  McpModule,
  AgentLoopModule,
  AgentAdaptersModule,
  ExternalAgentsModule,
  AgentChatModule,
  AgentsModule,
  SchedulesModule,
  WebhooksModule,
  RetentionModule,
];
