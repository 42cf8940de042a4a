import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import { RUNTIME_KINDS, type RevertResult, type RuntimeKind, type TurnStatus } from './agent-chat-rows';
import type { AgentChatFilesService } from './files/agent-chat-files.service';
import type { AgentChatGuidanceService } from './guidance/agent-chat-guidance.service';
import type { toQueueItemView } from './queue/agent-chat-queue.service';
import type { AgentChatService } from './agent-chat.service';
import type { segmentsOf, SessionView, toActiveTurnView, toMessageView, toSessionSummary } from './agent-chat-view';
import type { ChangedFile } from './files/changed-files';

/** Wire shapes of `/hecate/v1/agent-chat/*` (docs/api.md §4 Agent Chat, docs/api.md §5 live sessions), checked against their views. */

@ApiSchema({ name: 'AgentChatCapabilities' })
export class AgentChatCapabilitiesDto {
  tool_calling?: string;
  streaming?: boolean;
  source?: string;
}

/** One marker of an assistant message's progress (docs/api.md §1 "Activity rendering"). */
@ApiSchema({ name: 'AgentChatActivity' })
export class AgentChatActivityDto {
  type!: string;
  status!: string;
  title!: string;
  detail?: string;
  created_at?: string;
  /** `approval` activities: the approval (of a Hecate Agent turn's run, or an External Agent's request). */
  approval_id?: string;
  /** A pending approval waiting for a decision. */
  needs_action?: boolean;
}

@ApiSchema({ name: 'AgentChatMessageError' })
export class AgentChatMessageErrorDto {
  type!: string;
  message!: string;
}

/** External Agent replies also carry their adapter fields at the top level (docs/api.md §4). */
type ExternalField = 'adapter_id' | 'adapter_name' | 'driver_kind' | 'native_session_id' | 'cost_mode' | 'usage' | 'raw_output' | 'native_session_reset';

@ApiSchema({ name: 'AgentChatMessage' })
export class AgentChatMessageDto {
  id!: string;
  role!: 'user' | 'assistant';
  content!: string;
  status!: string;
  @ApiProperty({ enum: RUNTIME_KINDS })
  runtime_kind!: RuntimeKind;
  segment_id!: string;
  turn_id?: string;
  task_id?: string;
  /** The task run of an agent turn, or an External Agent reply's run id. */
  run_id?: string;
  provider?: string;
  model?: string;
  capabilities!: AgentChatCapabilitiesDto;
  error?: AgentChatMessageErrorDto;
  metadata?: Record<string, unknown>;
  diff_stat?: string;
  /** Task-backed replies: queue, model, tool, approval and overhead buckets (ms). */
  timing?: Record<string, unknown>;
  request_id?: string;
  trace_id?: string;
  /** Assistant messages (every runtime): the turn's span in `trace_id`. */
  span_id?: string;
  /** Agent and External Agent replies: the workspace directory the turn ran in. */
  workspace?: string;
  /** User messages: when sent. Assistant messages: when the turn's work began (set once it started or ended). */
  started_at?: string;
  completed_at?: string;
  /** Assistant messages that ended (every runtime): `completed_at` − `started_at`. */
  duration_ms?: number;
  activities?: AgentChatActivityDto[];
  created_at?: string;
  adapter_id?: string;
  adapter_name?: string;
  driver_kind?: string;
  native_session_id?: string;
  cost_mode?: string;
  usage?: Record<string, unknown>;
  /** The adapter's raw ACP updates as JSON text, for diagnostics. */
  raw_output?: string;
  native_session_reset?: boolean;
}

/** Contiguous messages of one runtime (docs/api.md §4 segments: a render helper). */
@ApiSchema({ name: 'AgentChatSegment' })
export class AgentChatSegmentDto {
  id!: string;
  runtime_kind!: string;
  provider?: string;
  model?: string;
  task_id?: string;
  latest_run_id?: string;
  status!: string;
  message_count!: number;
  first_at?: string;
  last_at?: string;
}

@ApiSchema({ name: 'AgentChatTurn' })
export class AgentChatTurnDto {
  id!: string;
  @ApiProperty({ enum: RUNTIME_KINDS })
  runtime_kind!: RuntimeKind;
  status!: TurnStatus;
  /** The live stream this turn writes (its SSE ids are `<turn>:<stream>:<index>`). */
  stream_id!: string;
  task_id?: string;
  run_id?: string;
  user_message_id!: string;
  assistant_message_id!: string;
  cancel_requested?: boolean;
}

/** `202` of `POST …/messages` with `wait: false`: the turn that was started. */
@ApiSchema({ name: 'AgentChatStartedTurn' })
export class AgentChatStartedTurnDto extends AgentChatTurnDto {
  session_id!: string;
}

@ApiSchema({ name: 'AgentChatSessionSummary' })
export class AgentChatSessionSummaryDto {
  id!: string;
  title!: string;
  @ApiProperty({ enum: RUNTIME_KINDS })
  runtime_kind!: RuntimeKind;
  provider?: string;
  model?: string;
  workspace?: string;
  adapter_id?: string;
  /** The saved agent and version the session was created from. */
  agent_id?: string;
  agent_version?: number;
  driver_kind?: string;
  native_session_id?: string;
  adapter_state?: string;
  capabilities!: AgentChatCapabilitiesDto;
  status!: string;
  turns_used!: number;
  max_turns_per_session?: number;
  session_started_at?: string;
  max_session_duration_ms?: number;
  idle_timeout_ms?: number;
  message_count!: number;
  closed_at?: string;
  created_at?: string;
  updated_at?: string;
}

/** The full session: header, the latest agent segment's task, the active turn, messages and segments. */
@ApiSchema({ name: 'AgentChatSession' })
export class AgentChatSessionDto extends AgentChatSessionSummaryDto {
  task_id?: string;
  latest_run_id?: string;
  active_turn!: AgentChatTurnDto | null;
  messages!: AgentChatMessageDto[];
  segments!: AgentChatSegmentDto[];
}

@ApiSchema({ name: 'AgentChatDeleted' })
export class AgentChatDeletedDto {
  id!: string;
  deleted!: boolean;
}

@ApiSchema({ name: 'AgentChatQueueItem' })
export class AgentChatQueueItemDto {
  id!: string;
  session_id!: string;
  content!: string;
  @ApiProperty({ enum: RUNTIME_KINDS })
  runtime_kind!: RuntimeKind;
  provider?: string;
  model?: string;
  workspace?: string;
  status!: 'queued' | 'starting' | 'started' | 'failed';
  turn_id?: string;
  error?: AgentChatMessageErrorDto;
  created_at?: string;
  updated_at?: string;
}

@ApiSchema({ name: 'AgentChatCancel' })
export class AgentChatCancelDto {
  session_id!: string;
  turn_id!: string;
  status!: string;
}

@ApiSchema({ name: 'AgentChatGuidanceAccepted' })
export class AgentChatGuidanceAcceptedDto {
  session_id!: string;
  guidance_id!: string;
  accepted!: boolean;
}

/** Where a consumed guidance item went: the turn, run, model call and transcript message (docs/design.md §11.5). */
@ApiSchema({ name: 'AgentChatGuidanceReceipt' })
export class AgentChatGuidanceReceiptDto {
  guidance_id!: string;
  turn_id?: string;
  run_id?: string;
  model_call_index?: number;
  message_id?: string;
  consumed_at?: string;
}

@ApiSchema({ name: 'AgentChatGuidanceItem' })
export class AgentChatGuidanceItemDto {
  guidance_id!: string;
  content!: string;
  status!: 'pending' | 'consumed';
  /** Unix seconds. */
  timestamp!: number;
  metadata?: Record<string, unknown>;
  receipt?: AgentChatGuidanceReceiptDto;
}

@ApiSchema({ name: 'AgentChatGuidanceList' })
export class AgentChatGuidanceListDto {
  session_id!: string;
  items!: AgentChatGuidanceItemDto[];
}

@ApiSchema({ name: 'AgentChatGuidanceUpdated' })
export class AgentChatGuidanceUpdatedDto {
  updated!: boolean;
}

@ApiSchema({ name: 'AgentChatGuidanceDeleted' })
export class AgentChatGuidanceDeletedDto {
  deleted!: boolean;
}

@ApiSchema({ name: 'AgentChatChangedFile' })
export class AgentChatChangedFileDto {
  path!: string;
  additions!: number;
  deletions!: number;
  status!: ChangedFile['status'];
}

@ApiSchema({ name: 'AgentChatChangedFileDiff' })
export class AgentChatChangedFileDiffDto extends AgentChatChangedFileDto {
  /** The file's block of the unified diff. */
  diff!: string;
}

/** What a revert did (the worker's result; files: what still differs from the turn's base afterwards). */
@ApiSchema({ name: 'AgentChatRevert' })
export class AgentChatRevertDto {
  reverted!: boolean;
  paths!: string[];
  diff_stat!: string;
  files!: AgentChatChangedFileDto[];
}

/** The session stream's `message` frame: the settled (or, after a lost buffer, persisted partial) assistant message. */
@ApiSchema({ name: 'AgentChatStreamMessage' })
export class AgentChatStreamMessageDto extends AgentChatMessageDto {
  /** Served from Postgres because the live buffer no longer held the stream. */
  resume_fallback?: boolean;
}

/** A session becoming busy or idle (`GET …/active-sessions`). */
@ApiSchema({ name: 'AgentChatActiveSession' })
export class AgentChatActiveSessionDto {
  session_id!: string;
  turn_id!: string;
  runtime_kind!: string;
  status!: string;
}

/** An External Agent's tool call starting (`tool_call`) or changing status (`tool_call_update`). */
@ApiSchema({ name: 'AgentChatToolCallFrame' })
export class AgentChatToolCallFrameDto {
  type!: 'tool_call' | 'tool_call_update';
  tool_call_id!: string;
  title?: string;
  kind?: string;
  status?: string;
}

/** A guidance message the running turn took, on its stream as `message` before the reply continues. */
@ApiSchema({ name: 'AgentChatGuidanceMessageFrame' })
export class AgentChatGuidanceMessageFrameDto {
  type!: 'message';
  id!: string;
  role!: 'user';
  content!: string;
  metadata!: Record<string, unknown>;
}

/** `guidance.consumed`: a model call took a guidance item (its receipt). */
@ApiSchema({ name: 'AgentChatGuidanceConsumedFrame' })
export class AgentChatGuidanceConsumedFrameDto {
  type!: 'guidance.consumed';
  guidance_id!: string;
  turn_id!: string;
  model_call_index!: number;
  message_id!: string;
}

type _MessageDocumented = Assert<Documents<Omit<AgentChatMessageDto, ExternalField>, ReturnType<typeof toMessageView>>>;
type _SegmentDocumented = Assert<Documents<AgentChatSegmentDto, ReturnType<typeof segmentsOf>[number]>>;
type _TurnDocumented = Assert<Documents<AgentChatTurnDto, ReturnType<typeof toActiveTurnView>>>;
type _SummaryDocumented = Assert<Documents<AgentChatSessionSummaryDto, ReturnType<typeof toSessionSummary>>>;
type _SessionDocumented = Assert<Documents<AgentChatSessionDto, SessionView>>;
type _ListDocumented = Assert<Documents<AgentChatSessionSummaryDto, Returned<AgentChatService['list']>[number]>>;
type _CancelDocumented = Assert<Documents<AgentChatCancelDto, Returned<AgentChatService['cancel']>>>;
type _QueueDocumented = Assert<Documents<AgentChatQueueItemDto, ReturnType<typeof toQueueItemView>>>;
type _GuidanceAddDocumented = Assert<Documents<AgentChatGuidanceAcceptedDto, Returned<AgentChatGuidanceService['add']>>>;
type _GuidanceListDocumented = Assert<Documents<AgentChatGuidanceListDto, Returned<AgentChatGuidanceService['list']>>>;
type _GuidanceItemDocumented = Assert<Documents<AgentChatGuidanceItemDto, Returned<AgentChatGuidanceService['list']>['items'][number]>>;
type _GuidanceUpdateDocumented = Assert<Documents<AgentChatGuidanceUpdatedDto, Returned<AgentChatGuidanceService['update']>>>;
type _GuidanceDeleteDocumented = Assert<Documents<AgentChatGuidanceDeletedDto, Returned<AgentChatGuidanceService['remove']>>>;
type _FilesDocumented = Assert<Documents<AgentChatChangedFileDto, Returned<AgentChatFilesService['files']>[number]>>;
type _FileDocumented = Assert<Documents<AgentChatChangedFileDiffDto, Returned<AgentChatFilesService['file']>>>;
type _RevertDocumented = Assert<Documents<AgentChatRevertDto, RevertResult>>;

/** docs/api.md §4 `POST /hecate/v1/workspace-dialog` where a native folder picker exists; this server has none (always 501). */
@ApiSchema({ name: 'WorkspaceDialog' })
export class WorkspaceDialogDto {
  /** The selected folder's absolute path. */
  path!: string;
  /** Its Git branch, when it is a repository. */
  branch?: string;
}
