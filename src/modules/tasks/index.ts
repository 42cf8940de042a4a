/** The tasks module's public face: other modules and the composition root import `@modules/tasks`, never its files. */
export { ExecutorRegistry } from './executor-registry.service';
export { redactMcpServers, REDACTED } from './mcp-servers-redaction';
export type { CommandSandbox, SandboxPolicy } from './run-executor';
export { RetentionController } from './retention.controller';
export { RunJob } from './run.job';
export { TaskRunnersModule } from './runners/task-runners.module';
export { TaskRunsController } from './task-runs.controller';
export { TasksController } from './tasks.controller';
export { TasksModule } from './tasks.module';
