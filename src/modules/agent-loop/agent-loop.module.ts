import { Module } from '@nestjs/common';
import { ApprovalsModule } from '@modules/approvals';
import { InferenceModule } from '@modules/inference';
import { McpWorkerModule } from '@modules/mcp';
import { TasksModule } from '@modules/tasks';
import { WorkspacesWorkerModule } from '@modules/workspaces';
import { AgentLoopRunsService } from './agent-loop-runs.service';
import { AgentLoopExecutor } from './agent-loop.executor';
import { AgentLoopRunner } from './agent-loop.runner';
import { AgentModelCalls } from './agent-model-calls';
import { AgentToolCalls } from './agent-tool-calls';

/** execution_kind=agent_loop for both roles: validation, the start-time model check, the plan (docs/design.md §5: registers into tasks). */
@Module({
  imports: [TasksModule],
  providers: [AgentLoopExecutor, AgentLoopRunsService],
  exports: [AgentLoopRunsService],
})
export class AgentLoopModule {}

/**
 * Worker-only (docs/design.md §11.2): the loop itself — model calls and tool calls run on workers, never in the api. Its
 * guidance comes through GUIDANCE_SOURCE (Agent Chat's, global).
 */
@Module({
  imports: [TasksModule, InferenceModule, ApprovalsModule, McpWorkerModule, AgentLoopModule, WorkspacesWorkerModule],
  providers: [AgentLoopRunner, AgentModelCalls, AgentToolCalls],
})
export class AgentLoopWorkerModule {}
