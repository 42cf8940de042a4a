import { ChatSessionsModule } from '@modules/chat-sessions/chat-sessions.module';
import { GatewayModule } from '@modules/gateway/gateway.module';
import { InferenceModule } from '@modules/inference';
import { ProvidersModule } from '@modules/providers/providers.module';
import { SystemModule } from '@modules/system/system.module';
import { UsageModule } from '@modules/usage/usage.module';
import { ApprovalsModule } from '@modules/approvals/approvals.module';
import { EventsModule } from '@modules/events/events.module';
import { TasksModule } from '@modules/tasks/tasks.module';

/**
 * Domain modules both roles load (services, repositories, entities). Controllers are added by ApiModule,
 * job processors by WorkerModule.
 */
export const DOMAIN_MODULES = [
  SystemModule,
  ProvidersModule,
  UsageModule,
  InferenceModule,
  GatewayModule,
  ChatSessionsModule,
  EventsModule,
  ApprovalsModule,
  TasksModule,
];
