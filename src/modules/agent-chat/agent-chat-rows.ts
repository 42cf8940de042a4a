/** Rows of the agent-chat tables as SQL returns them (snake_case; timestamps as Date). */
import type { ChangedFile } from './files/changed-files';

export type RuntimeKind = 'model' | 'agent' | 'external_agent';
export const RUNTIME_KINDS: readonly RuntimeKind[] = ['model', 'agent', 'external_agent'];

export type TurnStatus = 'queued' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';
/** A turn in one of these holds its session (the busy rule); the unique partial index enforces one per session. */
export const ACTIVE_TURN_STATUSES: readonly TurnStatus[] = ['queued', 'running', 'awaiting_approval'];
export const isActiveTurn = (s: string): boolean => (ACTIVE_TURN_STATUSES as readonly string[]).includes(s);
export const isFinishedTurn = (s: string): boolean => s === 'completed' || s === 'failed' || s === 'cancelled';

export interface Capabilities {
  tool_calling?: string;
  streaming?: boolean;
  source?: string;
}

export interface SessionRow {
  id: string;
  tenant_id: string;
  title: string;
  runtime_kind: RuntimeKind;
  provider: string;
  model: string;
  workspace: string;
  system_prompt: string;
  adapter_id: string;
  /** The saved agent (and version) the session was created from; '' / null: none. */
  agent_id: string;
  agent_version: number | null;
  /** The API key that created the session (null: the operator): its spend budgets apply to the session's turns. */
  api_key_id: string | null;
  /** External Agent sessions: the adapter's native session, its state, and the worker holding its process. */
  native_session_id: string;
  adapter_state: string;
  adapter_error: string;
  adapter_owner: string | null;
  adapter_token: string | null;
  adapter_lease_expires_at: Date | null;
  capabilities: Capabilities;
  status: string;
  turns_used: number;
  message_count: number;
  next_sequence: number;
  session_started_at: Date | null;
  last_activity_at: Date;
  closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface MessageRow {
  id: string;
  session_id: string;
  sequence: number;
  role: 'user' | 'assistant';
  content: string;
  status: string;
  runtime_kind: RuntimeKind;
  segment_id: string;
  turn_id: string | null;
  task_id: string | null;
  run_id: string | null;
  provider: string;
  model: string;
  capabilities: Capabilities;
  error: { type: string; message: string } | null;
  metadata: Record<string, unknown>;
  /** The changes the turn made to a git workspace (unified diff), and the tree it is relative to. */
  diff: string | null;
  base_tree: string | null;
  /** Where a task-backed turn's time went (docs/api.md §4 `timing`). */
  timing: Record<string, unknown> | null;
  /** A task-backed turn's run activity (Task Detail's compact vocabulary), stored when it ended. */
  run_activity: Array<Record<string, unknown>> | null;
  request_id: string | null;
  trace_id: string | null;
  /** An assistant message's span in the prompt's trace (`trace_id`): the turn's run. */
  span_id: string | null;
  /** The directory an agent or External Agent turn ran in ('' for model turns). */
  workspace: string;
  started_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TurnRow {
  id: string;
  tenant_id: string;
  session_id: string;
  runtime_kind: RuntimeKind;
  status: TurnStatus;
  segment_id: string;
  user_message_id: string;
  assistant_message_id: string;
  task_id: string | null;
  run_id: string | null;
  /** The live stream carrying the turn's frames: the turn's id (a model turn; `<id>.<attempt>` after a lost buffer), its run's id (an agent turn). */
  stream_id: string;
  provider: string;
  model: string;
  system_prompt: string;
  cancel_requested: boolean;
  attempts: number;
  error_kind: string;
  error: string;
  request_id: string | null;
  trace_id: string | null;
  lease_owner: string | null;
  lease_token: string | null;
  lease_expires_at: Date | null;
  enqueued_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewMessage = Pick<MessageRow, 'id' | 'role' | 'content' | 'status' | 'runtime_kind' | 'segment_id' | 'provider' | 'model' | 'capabilities'> &
  Partial<Pick<MessageRow, 'turn_id' | 'task_id' | 'run_id' | 'metadata' | 'request_id' | 'trace_id' | 'span_id' | 'workspace'>>;

export interface GuidanceRow {
  session_id: string;
  guidance_id: string;
  tenant_id: string;
  seq: string;
  content: string;
  metadata: Record<string, unknown>;
  status: 'pending' | 'consumed';
  consumed_turn_id: string | null;
  consumed_run_id: string | null;
  model_call_index: number | null;
  message_id: string | null;
  consumed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface QueueItemRow {
  id: string;
  session_id: string;
  tenant_id: string;
  seq: string;
  content: string;
  runtime_kind: RuntimeKind;
  provider: string;
  model: string;
  workspace: string;
  system_prompt: string;
  host_paths: boolean;
  status: 'queued' | 'starting' | 'started' | 'failed';
  turn_id: string | null;
  error: { type: string; message: string } | null;
  created_at: Date;
  updated_at: Date;
}

/** The worker request of `POST …/revert` (core/lease WorkerRequests): which message's captured changes, which of its paths. */
export const REVERT_REQUEST = 'agent_chat.revert';
export interface RevertRequest {
  session_id: string;
  message_id: string;
  paths: string[];
}

/** What a finished revert reports: the paths it reverted and what still differs from the turn's base afterwards. */
export interface RevertResult {
  reverted: boolean;
  paths: string[];
  diff_stat: string;
  files: Array<Omit<ChangedFile, 'diff'>>;
}

/** A turn as the api opens it (the rest of its columns take their defaults). */
export type NewTurn = Omit<
  TurnRow,
  | 'created_at'
  | 'updated_at'
  | 'attempts'
  | 'lease_owner'
  | 'lease_token'
  | 'lease_expires_at'
  | 'enqueued_at'
  | 'started_at'
  | 'finished_at'
  | 'cancel_requested'
  | 'error'
  | 'error_kind'
>;
