/** The agent-loop module's public face: the composition root imports `@modules/agent-loop`, never its files. */
export { AgentLoopModule, AgentLoopWorkerModule } from './agent-loop.module';
export { AgentLoopRunsController } from './agent-loop-runs.controller';
export { AgentLoopRunsService } from './agent-loop-runs.service';
export { GUIDANCE_SOURCE, type ConsumedGuidance, type GuidanceSource } from './guidance-source';
export { BUILTIN_TOOL_NAMES } from './builtin-tools';
