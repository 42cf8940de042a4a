import { SetMetadata } from '@nestjs/common';

export const RUN_EXECUTOR_METADATA = 'hecate:run-executor';
export const RUN_RUNNER_METADATA = 'hecate:run-runner';

/**
 * Marks a provider as the RunExecutor of its `kind` (validate, preflight, plan): the ExecutorRegistry finds every one
 * at startup. Declared on the class where the kind lives; a kind declared twice is a boot error.
 */
export const RunExecutorKind = (): ClassDecorator => SetMetadata(RUN_EXECUTOR_METADATA, true);

/**
 * Marks a provider as the RunRunner of its `kind` (what executes a run): the ExecutorRegistry finds every one at
 * startup. Runners live in worker-only modules, so the api process finds none. A kind declared twice is a boot error.
 */
export const RunRunnerKind = (): ClassDecorator => SetMetadata(RUN_RUNNER_METADATA, true);
