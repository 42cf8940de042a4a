import { RunTransitionError } from './tasks.errors';

export type RunStatus = 'queued' | 'awaiting_approval' | 'running' | 'completed' | 'failed' | 'cancelled';
export type TaskStatus = 'not_started' | RunStatus;

export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'awaiting_approval', 'running'];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

/**
 * The run status machine, in one place (docs/api.md §4: not_started → queued | awaiting_approval → running →
 * completed | failed | cancelled). `running → queued` is a lease reclaim; `running → awaiting_approval` is
 * a mid-run gate (agent_loop). Repositories update with `WHERE status IN (allowed sources)`, so the
 * machine holds under concurrency too.
 */
const TRANSITIONS: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['running', 'cancelled', 'failed'],
  awaiting_approval: ['queued', 'cancelled'],
  running: ['completed', 'failed', 'cancelled', 'queued', 'awaiting_approval'],
  completed: [],
  failed: [],
  cancelled: [],
};

export const isTerminal = (s: string): boolean => (TERMINAL_RUN_STATUSES as readonly string[]).includes(s);
export const isActive = (s: string): boolean => (ACTIVE_RUN_STATUSES as readonly string[]).includes(s);

export const canTransition = (from: RunStatus, to: RunStatus): boolean => TRANSITIONS[from].includes(to);

/** The statuses a run may be in to move to `to`. */
export const sourcesOf = (to: RunStatus): RunStatus[] => (Object.keys(TRANSITIONS) as RunStatus[]).filter((from) => TRANSITIONS[from].includes(to));

/** Throws 409 conflict when `from → to` is not a transition of the machine. */
export function assertTransition(runId: string, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) throw new RunTransitionError(runId, from, to);
}
