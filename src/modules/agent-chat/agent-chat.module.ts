import { Global, Module } from '@nestjs/common';
import { Liveness, SystemStat } from '@core/health/system-info.decorator';
import { AgentLoopModule, GUIDANCE_SOURCE } from '@modules/agent-loop';
import { ApprovalsModule } from '@modules/approvals';
import { EventsModule } from '@modules/events';
import { InferenceModule } from '@modules/inference';
import { ProvidersModule } from '@modules/providers';
import { TasksModule } from '@modules/tasks';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { AppConfig } from '@core/config/app-config';
import { AgentChatGuidanceService } from './guidance/agent-chat-guidance.service';
import { AgentChatApprovalsService } from './approvals/agent-chat-approvals.service';
import { ApprovalCoordinator } from './approvals/approval-coordinator';
import { ApprovalFramesService } from './approvals/approval-frames.service';
import { AgentChatQueueService } from './queue/agent-chat-queue.service';
import { AgentChatFilesService } from './files/agent-chat-files.service';
import { AgentChatRevertRunner } from './files/agent-chat-revert.runner';
import { AgentTurnRuntime } from './turns/agent-turn.runtime';
import { ExternalAgentTurnRuntime, ModelTurnRuntime } from './turns/model-turn.runtime';
import { ExternalSessionsService } from './external/external-sessions.service';
import { ExternalTurnExecutor } from './external/external-turn.executor';
import { ExternalPromptPhase } from './external/external-turn.prompt';
import { ExternalTurnSettler } from './external/external-turn.settler';
import { AgentAdaptersModule } from '@modules/agent-adapters';
import { AdapterSessionHost, ExternalAgentsModule, ExternalAgentsWorkerModule } from '@modules/external-agents';
import { TurnRuntimes } from './turns/turn-runtime';
import { AgentChatRecoveryService } from './turns/agent-chat-recovery.service';
import { AgentChatStreamService } from './agent-chat-stream.service';
import { AgentChatTurnRunner } from './turns/agent-chat-turn.runner';
import { ModelTurnExecutor } from './turns/model-turn.executor';
import { AgentChatTurnsService } from './turns/agent-chat-turns.service';
import { AgentChatRepository } from './agent-chat.repository';
import { AgentChatService } from './agent-chat.service';
import { AgentChatSessionFactory } from './agent-chat-session-factory';
import { AgentChatTurnStarter } from './turns/agent-chat-turn-starter';
import { GuidanceRepository } from './guidance/guidance.repository';
import { QueueRepository } from './queue/queue.repository';
import { TurnLeaseRepository } from './turns/turn-lease.repository';
import { OptimizeInputService } from './optimize-input/optimize-input.service';
import { AgentChatRetention } from './agent-chat-retention';

/** What the worker-only module needs of the shared one (the runtimes stay private: TurnRuntimes finds them). */
const SHARED = [
  AgentChatApprovalsService,
  TurnLeaseRepository,
  GuidanceRepository,
  QueueRepository,
  ExternalSessionsService,
  TurnRuntimes,
  AgentChatRepository,
  AgentChatTurnsService,
  AgentChatService,
  AgentChatStreamService,
  AgentChatGuidanceService,
  AgentChatQueueService,
  AgentChatFilesService,
];

/**
 * Agent Chat for both roles (docs/api.md §4 and §5, docs/design.md §11): sessions, turns, streams, guidance, queued-next, changed files;
 * the turn runtimes (model: a worker job; agent: an agent_loop run; external agent: a worker job on the session's
 * adapter) are @TurnRuntimeKind() providers that TurnRuntimes finds.
 */
@Module({
  imports: [TasksModule, AgentLoopModule, InferenceModule, ProvidersModule, AgentAdaptersModule, ExternalAgentsModule, ApprovalsModule, EventsModule],
  providers: [
    ...SHARED,
    AgentChatSessionFactory,
    AgentChatTurnStarter,
    ModelTurnRuntime,
    AgentTurnRuntime,
    ExternalAgentTurnRuntime,
    ApprovalFramesService,
    OptimizeInputService,
    AgentChatRetention,
  ],
  exports: [...SHARED, OptimizeInputService],
})
export class AgentChatModule {
  constructor(private readonly config: AppConfig) {}

  /** Operators show a danger banner when every adapter permission request is allowed unseen (docs/api.md §4). */
  @SystemStat('agent_adapter_approval_mode')
  adapterApprovalMode(): string {
    return this.config.agent.adapters.approvalMode;
  }
}

/**
 * Agent Chat as the agent loop's guidance source (GUIDANCE_SOURCE, docs/design.md §11.5): the loop asks it before each
 * model call of a chat's agent turn. Global because the agent loop cannot import Agent Chat (Agent Chat imports it); the
 * worker role builds it (WorkerModule.workerOnlyModules), as only workers run the loop.
 */
@Global()
@Module({
  imports: [AgentChatModule],
  providers: [{ provide: GUIDANCE_SOURCE, useExisting: AgentChatGuidanceService }],
  exports: [GUIDANCE_SOURCE],
})
export class AgentChatGuidanceModule {}

/** Worker-only (docs/design.md §11.2): model and external-agent turns run here, reverts, and the recovery pass that takes over turns of lost workers. */
@Module({
  imports: [
    AgentChatModule,
    AgentLoopModule,
    InferenceModule,
    TasksModule,
    AgentAdaptersModule,
    ExternalAgentsModule,
    ExternalAgentsWorkerModule,
    ApprovalsModule,
    WorkspacesWorkerModule,
  ],
  providers: [
    AgentChatTurnRunner,
    ModelTurnExecutor,
    AgentChatRecoveryService,
    AgentChatRevertRunner,
    ApprovalCoordinator,
    ExternalTurnExecutor,
    ExternalPromptPhase,
    ExternalTurnSettler,
  ],
  exports: [AgentChatTurnRunner, AgentChatRevertRunner],
})
export class AgentChatWorkerModule {
  constructor(
    private readonly runner: AgentChatTurnRunner,
    private readonly adapters: AdapterSessionHost,
  ) {}

  @Liveness('agent_chat_turns')
  turnsLiveness() {
    return { local_running: this.runner.activeCount(), adapter_processes: this.adapters.count() };
  }
}
