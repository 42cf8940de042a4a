/** The agent-chat module's public face (DESIGN §5): the composition root imports `@modules/agent-chat`, never its files. */
export { AgentChatModule, AgentChatWorkerModule } from './agent-chat.module';
export { AgentChatController } from './agent-chat.controller';
export { AgentChatApprovalsController } from './agent-chat-approvals.controller';
export { AgentChatTurnJob } from './agent-chat-turn.job';
export { AgentChatErrorType } from './agent-chat.errors';
