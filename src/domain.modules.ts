import { ChatSessionsModule } from '@modules/chat-sessions/chat-sessions.module';
import { SystemModule } from '@modules/system/system.module';

/**
 * Domain modules both roles load (services, repositories, entities). Controllers are added by ApiModule,
 * job processors by WorkerModule.
 */
export const DOMAIN_MODULES = [SystemModule, ChatSessionsModule];
