import type { TasksConfig } from '@core/config/groups/tasks.env';
import type { RunWriter } from './run-writer';
import type { RunCheckpoint, TaskRunEntity } from './task-run.entity';
import type { TaskEntity } from './task.entity';

/** What an approval shows and what the worker later proves it runs (docs/api.md §4 approvals). */
export interface ExecutionPlan {
  /** ≤16 human-readable lines: argv, cwd, env keys, sandbox. */
  summary: string[];
  /** Stored on the approval (argv, cwd, env_keys, …). */
  details: Record<string, unknown>;
  /** The part that must not change between approval and execution (hashed). */
  identity: Record<string, unknown>;
}

export interface RunWorkspace {
  /** Real path of the run's workspace. */
  path: string;
  /** Resolves a path inside the workspace (docs/security.md) or throws invalid_request. */
  resolve(requested: string, what?: string): Promise<string>;
  readOnly: boolean;
  network: boolean;
}

export interface ExecutionContext {
  task: TaskEntity;
  run: TaskRunEntity;
  workspace: RunWorkspace;
  /** Aborted on cancel, lease loss or shutdown: stop and kill children. */
  signal: AbortSignal;
  /** Lease-guarded writes: steps, artifacts, events, approvals. */
  writer: RunWriter;
  /** Resume context when the run was created by `resume` (goes into step input). */
  checkpoint: RunCheckpoint | null;
  /** Step indices an executor may use start here (1 is the machinery's workspace step). */
  firstStepIndex: number;
  config: TasksConfig;
}

export type ExecutionOutcome =
  | { status: 'completed'; summary?: Record<string, unknown> }
  | { status: 'failed'; error: string; errorKind: string }
  /** The executor opened an approval with `writer.pauseForApproval`; the run waits (agent_loop). */
  | { status: 'awaiting_approval' };

/**
 * One execution kind (shell, git, file; the agent-loop module declares agent_loop), as both roles need it: create-time
 * validation, the start-time preflight and the plan an approval shows. An executor class is marked
 * `@RunExecutorKind()` and the ExecutorRegistry finds it at startup (a runner: `@RunRunnerKind()`); the machinery (lease, heartbeat, workspace, approvals, events, recovery) is
 * shared. What runs the kind is its RunRunner, which only the worker builds.
 */
export interface RunExecutor {
  readonly kind: string;
  /**
   * Create-time checks of the kind's fields (400 with every problem). `caller.hostPaths` is true for the operator
   * (token or local), false for an API key; a policy refusal throws its own DomainError.
   */
  validate(task: TaskEntity, caller?: { hostPaths: boolean }): string[] | Promise<string[]>;
  /**
   * Start-time check before a run is created (e.g. agent_loop: 422 model_not_configured when no model
   * resolves); throw a DomainError to refuse. No run is created.
   */
  preflight?(task: TaskEntity): void | Promise<void>;
  /** What will run, for a pre-execution approval; computed from the task and the planned workspace. */
  plan(task: TaskEntity, workspacePath: string): ExecutionPlan;
}

/** The worker half of an execution kind: runs a claimed run (tools, sandbox). Built only by worker-only modules. */
export interface RunRunner {
  readonly kind: string;
  execute(ctx: ExecutionContext): Promise<ExecutionOutcome>;
}
