import { ChatSessionsModule } from '@modules/chat-sessions/chat-sessions.module';
import { InferenceModule } from '@modules/inference';
import { ProvidersModule } from '@modules/providers/providers.module';
import { SystemModule } from '@modules/system/system.module';
import { UsageModule } from '@modules/usage/usage.module';
import { ApprovalsModule } from '@modules/approvals/approvals.module';
import { EventsModule } from '@modules/events/events.module';
import { TasksModule } from '@modules/tasks/tasks.module';

/**
 * Domain modules both roles load (services, repositories, entities). Controllers and the edges (`gateway`) are
 * added by ApiModule, job processors and worker-only modules by WorkerModule.
 */
export const DOMAIN_MODULES = [SystemModule, ProvidersModule, UsageModule, InferenceModule, ChatSessionsModule, EventsModule, ApprovalsModule, TasksModule];
