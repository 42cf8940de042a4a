import { newId } from './task-ids';
import type { StepStatus, TaskStepEntity } from './task-step.entity';

/** What a run's steps write and return (RunWriter.step): the shapes executors and the agent loop build. */

export interface NewArtifact {
  id?: string;
  stepId?: string | null;
  kind: string;
  name: string;
  description?: string;
  mimeType?: string;
  path?: string;
  content: string;
  truncated?: boolean;
  status?: string;
  metadata?: Record<string, unknown>;
}

export interface RunUsage {
  model?: string;
  provider?: string;
  providerKind?: string;
  addCostMicrosUsd?: number;
}

export interface StepSpec {
  index: number;
  kind: string;
  title: string;
  toolName: string;
  input: Record<string, unknown>;
  /** Safe to run again after a crash mid-step (else the step is reported failed, never repeated). */
  idempotent: boolean;
  /** The run's pre-execution approval, linked on the step. */
  approvalId?: string | null;
  /** Extra events written with the step's dispatch record (same transaction), e.g. tool.shell.command. */
  startEvents?(stepId: string): { type: string; data: Record<string, unknown> }[];
}

export type StepOutcomeStatus = 'completed' | 'failed' | 'cancelled' | 'timed_out';

export interface StepOutcome {
  status: StepOutcomeStatus;
  outputSummary?: Record<string, unknown>;
  exitCode?: number | null;
  error?: string;
  errorKind?: string;
  result?: string;
  /** Written with the step result, in the same transaction. */
  artifacts?: NewArtifact[];
  /** Emitted before the terminal tool event, in the same transaction. */
  events?: { type: string; data: Record<string, unknown> }[];
  /** Extra fields of the terminal tool.* event. */
  eventData?: Record<string, unknown>;
  /** What the run used and spent in this step (agent_loop's model calls): recorded on the run with the step's result. */
  usage?: RunUsage;
  /**
   * The next step, when it is decided by this one's result (the agent loop's next tool or model call): its dispatch
   * record commits with this result, and the `step()` call with its index runs it without a dispatch write of its own.
   */
  next?: StepSpec;
}

export const TOOL_EVENT: Record<StepOutcomeStatus, string> = {
  completed: 'tool.completed',
  failed: 'tool.failed',
  cancelled: 'tool.cancelled',
  timed_out: 'tool.timed_out',
};

export const STEP_STATUS: Record<StepOutcomeStatus, StepStatus> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  timed_out: 'failed',
};

/** A recorded step's outcome, as a replay returns it. */
export const outcomeOf = (s: TaskStepEntity): StepOutcome => ({
  status: s.status === 'completed' ? 'completed' : s.status === 'cancelled' ? 'cancelled' : s.errorKind === 'timeout' ? 'timed_out' : 'failed',
  outputSummary: s.outputSummary,
  exitCode: s.exitCode,
  error: s.error,
  errorKind: s.errorKind,
  result: s.result,
});

/** A new step's dispatch record (status running) of the run `ref`. */
export function newStepRow(ref: { tenantId: string; taskId: string; runId: string }, spec: StepSpec): TaskStepEntity {
  const now = new Date();
  return {
    id: newId('step'),
    tenantId: ref.tenantId,
    taskId: ref.taskId,
    runId: ref.runId,
    index: spec.index,
    kind: spec.kind,
    title: spec.title,
    status: 'running',
    phase: 'dispatched',
    result: '',
    toolName: spec.toolName,
    idempotent: spec.idempotent,
    input: spec.input,
    outputSummary: {},
    exitCode: null,
    error: '',
    errorKind: '',
    approvalId: spec.approvalId ?? null,
    startedAt: now,
    finishedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The events of a step's dispatch record: tool.invoked, tool.started and the spec's own. */
export function dispatchEvents(step: TaskStepEntity, spec: StepSpec): { type: string; data: Record<string, unknown> }[] {
  const base = { tool_call_id: step.id, tool_name: spec.toolName, kind: spec.kind, step_id: step.id };
  return [{ type: 'tool.invoked', data: { ...base, input: spec.input } }, { type: 'tool.started', data: base }, ...(spec.startEvents?.(step.id) ?? [])];
}
