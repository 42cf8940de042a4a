/** The tasks module's public face: other modules and the composition root import `@modules/tasks`, never its files. */
export { RetentionController } from './retention.controller';
export { RunJob } from './run.job';
export { TaskRunnersModule } from './runners/task-runners.module';
export { TaskRunsController } from './task-runs.controller';
export { TasksController } from './tasks.controller';
export { TasksModule } from './tasks.module';
export { ExecutorRegistry } from './executor-registry.service';
export type { CommandSandbox, ExecutionContext, ExecutionOutcome, ExecutionPlan, RunExecutor, RunRunner, RunWorkspace, SandboxPolicy } from './run-executor';
export type { NewArtifact, RunWriter, StepOutcome } from './run-writer';
export { readCurrent, writeCurrent } from './executors/file-ops';
export { unifiedDiff } from './executors/unified-diff';
export { commandEnv } from './executors/command-step';
export { storableText } from './executors/chunk-streamer';
export { GIT_ENV, gitArgv, gitArgvProblem } from './executors/git-argv';
export { runProcess } from './sandbox/process-runner';
export { relativeInside } from './workspace/path-resolver';
export { newId } from './task-ids';
export { InvalidTaskError } from './tasks.errors';
