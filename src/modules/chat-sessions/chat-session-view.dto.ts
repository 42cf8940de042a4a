import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents } from '@core/http/openapi';
import { formatUsd } from '@core/money';
import { LiveDeltaFrameDto } from '@modules/inference';
import type { MessageStatus } from './chat-message';
import type { ChatMessageRow, ChatProviderCallRow, ChatSessionRow } from './chat-rows';

/** Wire shapes of /hecate/v1/chat/sessions (docs/api.md §1 "Wire shape", plus the tree and lineage fields). */

/** The row ordinary navigation should open for this id (docs/api.md §2 rule 2). */
export const canonicalVisibleId = (s: ChatSessionRow): string => (s.preCompressionSnapshot ? s.lineageTipId : s.id);

export function toChatSessionSummary(s: ChatSessionRow) {
  return {
    id: s.id,
    title: s.title,
    system_prompt: s.systemPrompt,
    user: s.userName,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    active_leaf_id: s.activeLeafId,
    message_count: s.messageCount,
    provider_call_count: s.providerCallCount,
    last_model: s.lastModel ?? '',
    last_provider: s.lastProvider ?? '',
    last_cost_usd: s.lastCostMicrosUsd === null ? '' : formatUsd(s.lastCostMicrosUsd),
    last_request_id: s.lastRequestId ?? '',
    parent_session_id: s.parentSessionId,
    lineage_root_id: s.lineageRootId,
    lineage_tip_id: s.lineageTipId,
    compression_segment_count: s.compressionSegmentCount,
    continuation_session_id: s.continuationSessionId,
    pre_compression_snapshot: s.preCompressionSnapshot,
    canonical_visible_session_id: canonicalVisibleId(s),
  };
}

/** A message as turn and stop responses show it (GET renders the same shape in SQL, plus sibling fields). */
export function toChatMessageResponse(m: ChatMessageRow) {
  const { role, content, ...rest } = m.messageJson;
  return {
    ...rest,
    id: m.id,
    sequence: m.sequence,
    parent_id: m.parentId,
    ...(m.producedByCallId ? { produced_by_call_id: m.producedByCallId } : {}),
    role,
    content: content === undefined ? '' : content,
    status: m.status,
    ...(m.kind !== 'message' ? { kind: m.kind } : {}),
    ...(m.errorJson ? { error: m.errorJson } : {}),
    ...(m.clientRequestId ? { client_request_id: m.clientRequestId } : {}),
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}

export function toProviderCallResponse(c: ChatProviderCallRow) {
  return {
    id: c.id,
    request_id: c.requestId,
    provider: c.provider,
    provider_kind: c.providerKind,
    model: c.model,
    ...(c.requestedModel ? { requested_model: c.requestedModel } : {}),
    ...(c.routeReason ? { route_reason: c.routeReason } : {}),
    status: c.status,
    cost_micros_usd: c.costMicrosUsd,
    cost_usd: formatUsd(c.costMicrosUsd),
    prompt_tokens: c.promptTokens,
    completion_tokens: c.completionTokens,
    total_tokens: c.totalTokens,
    created_at: c.createdAt.toISOString(),
  };
}

export function toLineageResponse(requested: ChatSessionRow, rows: ChatSessionRow[]) {
  return {
    root_session_id: requested.lineageRootId,
    tip_session_id: requested.lineageTipId,
    parent_session_id: requested.parentSessionId,
    continuation_session_id: requested.continuationSessionId,
    compression_segment_count: requested.compressionSegmentCount,
    pre_compression_snapshot: requested.preCompressionSnapshot,
    session_ids: rows.map((r) => r.id),
  };
}

@ApiSchema({ name: 'ChatSessionSummary' })
export class ChatSessionSummaryDto {
  id!: string;
  title!: string;
  system_prompt!: string;
  user!: string;
  created_at!: string;
  updated_at!: string;
  active_leaf_id!: string | null;
  message_count!: number;
  provider_call_count!: number;
  last_model!: string;
  last_provider!: string;
  last_cost_usd!: string;
  last_request_id!: string;
  parent_session_id!: string | null;
  lineage_root_id!: string;
  lineage_tip_id!: string;
  compression_segment_count!: number;
  continuation_session_id!: string | null;
  pre_compression_snapshot!: boolean;
  /** The row ordinary navigation should open for this id (docs/api.md §2). */
  canonical_visible_session_id!: string;
}

@ApiSchema({ name: 'ChatToolCallFunction' })
export class ChatToolCallFunctionDto {
  name!: string;
  arguments!: string;
}

@ApiSchema({ name: 'ChatToolCall' })
export class ChatToolCallDto {
  id!: string;
  type!: 'function';
  function!: ChatToolCallFunctionDto;
}

/**
 * A stored message: OpenAI-shaped (role, content, tool calls) plus Hecate's `content_blocks` and tree fields. Fields a
 * provider sent beyond these are kept as they came.
 */
@ApiSchema({ name: 'ChatMessage' })
export class ChatMessageDto {
  id!: string;
  sequence!: number;
  parent_id!: string | null;
  produced_by_call_id?: string;
  role!: string;
  /** A string, OpenAI content parts, or null (an assistant message that only calls tools). */
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }, { type: 'null' }] })
  content!: unknown;
  status!: MessageStatus;
  kind?: 'compaction_summary';
  error?: Record<string, unknown>;
  /** The idempotency key the message was sent with. */
  client_request_id?: string;
  /** Anthropic-style blocks (thinking kept with its signature, tool_use, text). */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  content_blocks?: Record<string, unknown>[];
  tool_calls?: ChatToolCallDto[];
  tool_call_id?: string;
  tool_error?: boolean;
  name?: string;
  /** GET: position among the parent's children, and how many there are (branch navigation). */
  sibling_index?: number;
  sibling_count?: number;
  /** `view=tree` only. */
  children_ids?: string[];
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'ChatProviderCall' })
export class ChatProviderCallDto {
  id!: string;
  request_id!: string;
  provider!: string;
  provider_kind!: string;
  model!: string;
  requested_model?: string;
  route_reason?: string;
  status!: string;
  cost_micros_usd!: number;
  cost_usd!: string;
  prompt_tokens!: number;
  completion_tokens!: number;
  total_tokens!: number;
  created_at!: string;
}

/** A session with its messages (the active path, or `view=tree` every message) and provider calls. */
@ApiSchema({ name: 'ChatSession' })
export class ChatSessionDto extends ChatSessionSummaryDto {
  view?: 'active_path' | 'tree';
  messages!: ChatMessageDto[];
  provider_calls!: ChatProviderCallDto[];
}

@ApiSchema({ name: 'ChatSessionDeleted' })
export class ChatSessionDeletedDto {
  id!: string;
  deleted!: boolean;
  /** The whole lineage when the visible row was deleted; only the snapshot otherwise. */
  deleted_session_ids!: string[];
}

@ApiSchema({ name: 'ChatSessionLineage' })
export class ChatSessionLineageDto {
  root_session_id!: string;
  tip_session_id!: string;
  parent_session_id!: string | null;
  continuation_session_id!: string | null;
  compression_segment_count!: number;
  pre_compression_snapshot!: boolean;
  session_ids!: string[];
}

@ApiSchema({ name: 'ChatSessionResolution' })
export class ChatSessionResolutionDto {
  requested_session_id!: string;
  canonical_visible_session_id!: string;
  /** `self`, or `continuation` for a pre-compression snapshot. */
  reason!: string;
  lineage!: ChatSessionLineageDto;
}

@ApiSchema({ name: 'ChatSessionStop' })
export class ChatSessionStopDto {
  session_id!: string;
  /** The in-flight assistant messages that were stopped (their partial output kept). */
  stopped!: ChatMessageDto[];
}

@ApiSchema({ name: 'ChatUsage' })
export class ChatUsageDto {
  prompt_tokens!: number;
  completion_tokens!: number;
  total_tokens!: number;
}

/** A turn's result (docs/api.md §3); an edit without `regenerate` answers only the new user message. */
@ApiSchema({ name: 'ChatTurn' })
export class ChatTurnResultDto {
  session_id!: string;
  /** The turn ran in the continuation of a session compacted on the way. */
  compacted_from_session_id?: string;
  user_message!: ChatMessageDto | null;
  assistant_message!: ChatMessageDto | null;
  tool_results?: ChatMessageDto[];
  provider_call?: ChatProviderCallDto | null;
  usage?: ChatUsageDto | null;
  cost_micros_usd?: number;
  cost_usd?: string;
}

/** `message.created`, the first frame of a streamed turn: the ids the turn writes. */
@ApiSchema({ name: 'ChatTurnCreatedFrame' })
export class ChatTurnCreatedFrameDto {
  session_id!: string;
  compacted_from_session_id?: string;
  user_message_id!: string | null;
  assistant_message_id!: string;
  parent_id!: string | null;
  stream_id!: string;
}

@ApiSchema({ name: 'ChatTurnDeltaFrame' })
export class ChatTurnDeltaFrameDto extends LiveDeltaFrameDto {
  /** The chunk's index in the turn's live stream (also the frame's `id:`). */
  index!: number;
}

@ApiSchema({ name: 'ChatTurnErrorFrame' })
export class ChatTurnErrorFrameDto extends ChatTurnResultDto {
  @ApiProperty({ type: 'object', additionalProperties: true })
  error!: Record<string, unknown>;
}

export type ChatMessageView = ReturnType<typeof toChatMessageResponse> & Pick<ChatMessageDto, 'sibling_index' | 'sibling_count' | 'children_ids'>;

type _SummaryDocumented = Assert<Documents<ChatSessionSummaryDto, ReturnType<typeof toChatSessionSummary>>>;
type _MessageDocumented = Assert<Documents<ChatMessageDto, ChatMessageView>>;
type _CallDocumented = Assert<Documents<ChatProviderCallDto, ReturnType<typeof toProviderCallResponse>>>;
type _LineageDocumented = Assert<Documents<ChatSessionLineageDto, ReturnType<typeof toLineageResponse>>>;
