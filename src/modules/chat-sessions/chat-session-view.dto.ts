import { formatUsd } from '@core/money';
import type { ChatMessageEntity } from './chat-message.entity';
import type { ChatProviderCallEntity } from './chat-provider-call.entity';
import type { ChatSessionEntity } from './chat-session.entity';

/** Wire shapes of /hecate/v1/chat/sessions (seed 000 "Wire shape", plus the tree and lineage fields). */

/** The row ordinary navigation should open for this id (seed 001 rule 2). */
export const canonicalVisibleId = (s: ChatSessionEntity): string => (s.preCompressionSnapshot ? s.lineageTipId : s.id);

export function toChatSessionSummary(s: ChatSessionEntity) {
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
export function toChatMessageResponse(m: ChatMessageEntity) {
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

export function toProviderCallResponse(c: ChatProviderCallEntity) {
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

export function toLineageResponse(requested: ChatSessionEntity, rows: ChatSessionEntity[]) {
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
