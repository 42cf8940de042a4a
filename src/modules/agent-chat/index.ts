/** The agent-chat module's public face (docs/design.md §5): the composition root imports `@modules/agent-chat`, never its files. */
export { AgentChatGuidanceModule, AgentChatModule, AgentChatWorkerModule } from './agent-chat.module';
export { AgentChatController } from './agent-chat.controller';
export { AgentChatApprovalsController } from './approvals/agent-chat-approvals.controller';
export { WorkspaceDialogController } from './workspace-dialog.controller';
export { OptimizeInputController } from './optimize-input/optimize-input.controller';
export { AgentChatTurnJob } from './turns/agent-chat-turn.job';
export { AgentChatService } from './agent-chat.service';
export { AgentChatQueueService } from './queue/agent-chat-queue.service';
export { AgentChatApprovalsService } from './approvals/agent-chat-approvals.service';
export { PostAgentChatMessageDto } from './agent-chat.dto';
export { toActiveTurnView } from './agent-chat-view';
export { AgentChatErrorType } from './agent-chat.errors';
