import { Module, OnModuleInit } from '@nestjs/common';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
import { AgentLoopModule, GuidanceRegistry } from '@modules/agent-loop';
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
import { SessionKeysRepository } from './external/session-keys.repository';
import { AgentChatQueueService } from './queue/agent-chat-queue.service';
import { AgentChatFilesService } from './files/agent-chat-files.service';
import { AgentChatRevertRunner } from './files/agent-chat-revert.runner';
import { AgentTurnRuntime } from './turns/agent-turn.runtime';
import { ExternalAgentTurnRuntime, ModelTurnRuntime } from './turns/model-turn.runtime';
import { AdapterSessionRepository } from './external/adapter-session.repository';
import { AdapterSessionHost } from './external/adapter-session-host';
import { ExternalSessionsService } from './external/external-sessions.service';
import { ExternalTurnExecutor } from './external/external-turn.executor';
import { ExternalPromptPhase } from './external/external-turn.prompt';
import { ExternalTurnSettler } from './external/external-turn.settler';
import { AgentAdaptersModule, AgentAdaptersWorkerModule } from '@modules/agent-adapters';
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

/** What the worker-only module needs of the shared one (the runtimes stay private: they register themselves). */
const SHARED = [
  SessionKeysRepository,
  AgentChatApprovalsService,
  TurnLeaseRepository,
  GuidanceRepository,
  QueueRepository,
  AdapterSessionRepository,
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
 * the turn runtimes (model: a worker job; agent: an agent_loop run) register into TurnRuntimes.
 */
@Module({
  imports: [TasksModule, AgentLoopModule, InferenceModule, ProvidersModule, AgentAdaptersModule, ApprovalsModule, EventsModule],
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
export class AgentChatModule implements OnModuleInit {
  constructor(
    private readonly config: AppConfig,
    private readonly registry: SystemInfoRegistry,
  ) {}

  onModuleInit(): void {
    // Operators show a danger banner when every adapter permission request is allowed unseen (docs/api.md §4).
    this.registry.addStats('agent_adapter_approval_mode', () => this.config.agent.adapters.approvalMode);
  }
}

/** Worker-only (docs/design.md §11.2): model turns run here, the recovery pass that takes over turns of lost workers, and the guidance source of the agent loop. */
@Module({
  imports: [
    AgentChatModule,
    AgentLoopModule,
    InferenceModule,
    TasksModule,
    AgentAdaptersModule,
    AgentAdaptersWorkerModule,
    ApprovalsModule,
    WorkspacesWorkerModule,
  ],
  providers: [
    AgentChatTurnRunner,
    ModelTurnExecutor,
    AgentChatRecoveryService,
    AgentChatRevertRunner,
    AdapterSessionHost,
    ApprovalCoordinator,
    ExternalTurnExecutor,
    ExternalPromptPhase,
    ExternalTurnSettler,
  ],
  exports: [AgentChatTurnRunner, AgentChatRevertRunner, AdapterSessionHost],
})
export class AgentChatWorkerModule implements OnModuleInit {
  constructor(
    private readonly registry: SystemInfoRegistry,
    private readonly runner: AgentChatTurnRunner,
    private readonly guidance: AgentChatGuidanceService,
    private readonly guidanceRegistry: GuidanceRegistry,
    private readonly adapters: AdapterSessionHost,
  ) {}

  onModuleInit(): void {
    // The agent loop asks Agent Chat for guidance before each model call of a chat's agent turn.
    this.guidanceRegistry.register(this.guidance);
    this.registry.addLiveness('agent_chat_turns', () => ({ local_running: this.runner.activeCount(), adapter_processes: this.adapters.count() }));
  }
}
