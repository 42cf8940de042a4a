/** SQL pieces the Agent Chat repositories share: the turn and adapter leases, the active-turn predicate, message columns and values. */
import { storableJson, storableText } from '@core/database/storable';
import { Lease } from '@core/lease';
import type { NewMessage } from './agent-chat-rows';

/** The turn lease (docs/design.md §11.3): the one lease primitive over `agent_chat_turns`, held while the turn runs on a worker. */
export const TURN_LEASE = new Lease({
  table: 'agent_chat_turns',
  id: 'id',
  owner: 'lease_owner',
  token: 'lease_token',
  expiresAt: 'lease_expires_at',
  heldWhere: `status = 'running'`,
});

export const ACTIVE = `status IN ('queued', 'running', 'awaiting_approval')`;

/** The columns of a message row after `id`, `session_id` and `sequence`, in the order `messageValues` gives them. */
export const MESSAGE_TAIL_COLUMNS =
  'role, content, status, runtime_kind, segment_id, turn_id, task_id, run_id, provider, model, capabilities, metadata, request_id, trace_id, span_id, workspace';

/** A new message's values for MESSAGE_TAIL_COLUMNS (jsonb ones serialised, NUL stored as U+FFFD). */
export const messageValues = (m: NewMessage): unknown[] => [
  m.role,
  storableText(m.content),
  m.status,
  m.runtime_kind,
  m.segment_id,
  m.turn_id ?? null,
  m.task_id ?? null,
  m.run_id ?? null,
  m.provider,
  m.model,
  storableJson(m.capabilities),
  storableJson(m.metadata ?? {}),
  m.request_id ?? null,
  m.trace_id ?? null,
  m.span_id ?? null,
  m.workspace ?? '',
];
