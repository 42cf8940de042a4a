import { isoText } from '@core/database/sql';
import type { ChatMessageJson, MessageKind, MessageStatus } from './chat-message';

/**
 * The chat store's rows as the module holds them. The store reads and writes them with its own SQL (the repositories,
 * ChatTx, chat-insert-batch.ts): plain types, no TypeORM entities; the schema is the migrations'.
 */

/** One conversation (docs/api.md §1), a node of a compression lineage (docs/api.md §2): `chat_sessions`. */
export interface ChatSessionRow {
  id: string;
  tenantId: string;
  title: string;
  systemPrompt: string;
  userName: string;
  activeLeafId: string | null;
  /** Next message sequence; bumped in the transaction that inserts the messages. */
  nextSequence: number;
  messageCount: number;
  providerCallCount: number;
  lastModel: string | null;
  lastProvider: string | null;
  lastCostMicrosUsd: number | null;
  lastRequestId: string | null;
  parentSessionId: string | null;
  lineageRootId: string;
  lineageTipId: string;
  compressionSegmentCount: number;
  continuationSessionId: string | null;
  preCompressionSnapshot: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** One message of a session's tree (docs/api.md §1 `chat_session_messages` + docs/api.md §3 `parent_id`). */
export interface ChatMessageRow {
  id: string;
  sessionId: string;
  sequence: number;
  parentId: string | null;
  /** Replayable messages (status other than failed) from the root up to and including this one. */
  replayCount: number;
  /** JSON size of those messages (the context-size estimate for compaction). */
  replayChars: number;
  role: string;
  status: MessageStatus;
  kind: MessageKind;
  producedByCallId: string | null;
  messageJson: ChatMessageJson;
  errorJson: Record<string, unknown> | null;
  clientRequestId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One upstream call made for a session (docs/api.md §1 provider-calls stream): `chat_session_provider_calls`. */
export interface ChatProviderCallRow {
  id: string;
  sessionId: string;
  requestId: string;
  provider: string;
  providerKind: string;
  model: string;
  requestedModel: string | null;
  routeReason: string | null;
  status: string;
  costMicrosUsd: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  createdAt: Date;
}

/**
 * An in-flight generation (or compaction, leaf_key `*`): the branch lock, and who to ask to stop it
 * (`chat_session_generations`). Held under the one lease primitive (core/lease): the owner extends `lease_expires_at`;
 * an expired lease (GATEWAY_CHAT_GENERATION_STALE_AFTER without a heartbeat) frees the leaf.
 */
export interface ChatGenerationRow {
  id: string;
  sessionId: string;
  leafKey: string;
  messageId: string | null;
  kind: string;
  previousStatus: string | null;
  owner: string;
  startedAt: Date;
  leaseToken: string;
  leaseExpiresAt: Date;
}

/** A raw snake_case row of the store's SQL, mapped to the types above by the functions below. */
type Raw = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const int = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0));
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

export const SESSION_COLUMNS = `id, tenant_id, title, system_prompt, user_name, active_leaf_id, next_sequence, message_count,
  provider_call_count, last_model, last_provider, last_cost_micros_usd, last_request_id, parent_session_id, lineage_root_id,
  lineage_tip_id, compression_segment_count, continuation_session_id, pre_compression_snapshot, created_at, updated_at`;

/**
 * Timestamps as ISO text and JSON as text: node-postgres' own timestamp and json parsing costs more than
 * the query on large reads (a 10,000-message session); `new Date(iso)` and JSON.parse in JS are cheap.
 */
export const MESSAGE_COLUMNS = `id, session_id, sequence, parent_id, replay_count, replay_chars, role, status, kind, produced_by_call_id,
  message_json::text AS message_json, error_json::text AS error_json, client_request_id, ${isoText('created_at')} AS created_at, ${isoText('updated_at')} AS updated_at`;

export const CALL_COLUMNS = `id, session_id, request_id, provider, provider_kind, model, requested_model, route_reason, status,
  cost_micros_usd, prompt_tokens, completion_tokens, total_tokens, ${isoText('created_at')} AS created_at`;

export function sessionFromRow(r: Raw): ChatSessionRow {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    title: String(r.title ?? ''),
    systemPrompt: String(r.system_prompt ?? ''),
    userName: String(r.user_name ?? ''),
    activeLeafId: str(r.active_leaf_id),
    nextSequence: int(r.next_sequence),
    messageCount: int(r.message_count),
    providerCallCount: int(r.provider_call_count),
    lastModel: str(r.last_model),
    lastProvider: str(r.last_provider),
    lastCostMicrosUsd: r.last_cost_micros_usd === null || r.last_cost_micros_usd === undefined ? null : int(r.last_cost_micros_usd),
    lastRequestId: str(r.last_request_id),
    parentSessionId: str(r.parent_session_id),
    lineageRootId: String(r.lineage_root_id),
    lineageTipId: String(r.lineage_tip_id),
    compressionSegmentCount: int(r.compression_segment_count),
    continuationSessionId: str(r.continuation_session_id),
    preCompressionSnapshot: r.pre_compression_snapshot === true,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function messageFromRow(r: Raw): ChatMessageRow {
  return {
    id: String(r.id),
    sessionId: String(r.session_id),
    sequence: int(r.sequence),
    parentId: str(r.parent_id),
    replayCount: int(r.replay_count),
    replayChars: int(r.replay_chars),
    role: String(r.role),
    status: String(r.status) as ChatMessageRow['status'],
    kind: String(r.kind) as ChatMessageRow['kind'],
    producedByCallId: str(r.produced_by_call_id),
    messageJson: json(r.message_json),
    errorJson: r.error_json === null || r.error_json === undefined ? null : json(r.error_json),
    clientRequestId: str(r.client_request_id),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function callFromRow(r: Raw): ChatProviderCallRow {
  return {
    id: String(r.id),
    sessionId: String(r.session_id),
    requestId: String(r.request_id ?? ''),
    provider: String(r.provider ?? ''),
    providerKind: String(r.provider_kind ?? ''),
    model: String(r.model ?? ''),
    requestedModel: str(r.requested_model),
    routeReason: str(r.route_reason),
    status: String(r.status ?? 'completed'),
    costMicrosUsd: int(r.cost_micros_usd),
    promptTokens: int(r.prompt_tokens),
    completionTokens: int(r.completion_tokens),
    totalTokens: int(r.total_tokens),
    createdAt: date(r.created_at),
  };
}

export function generationFromRow(r: Raw): ChatGenerationRow & { stale: boolean } {
  return {
    id: String(r.id),
    sessionId: String(r.session_id),
    leafKey: String(r.leaf_key),
    messageId: str(r.message_id),
    kind: String(r.kind),
    previousStatus: str(r.previous_status),
    owner: String(r.owner),
    startedAt: date(r.started_at),
    leaseToken: String(r.lease_token),
    leaseExpiresAt: date(r.lease_expires_at),
    stale: r.stale === true,
  };
}

/** Light tree row: enough to compute children, siblings and the latest path. */
export interface TreeLink {
  id: string;
  parentId: string | null;
  sequence: number;
}

export const linkFromRow = (r: Raw): TreeLink => ({ id: String(r.id), parentId: str(r.parent_id), sequence: int(r.sequence) });
