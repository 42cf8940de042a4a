import type { DataSource, EntityManager } from 'typeorm';
import { PreparedStatement, queryPrepared } from '@core/database/prepared-statement';
import { storableJson } from '@core/database/storable';
import type { ChatSessionRow } from './chat-rows';
import { CALL_COLUMNS_INSERT, insertFromJsonSql, insertFromValuesSql, MESSAGE_COLUMNS_INSERT, valuesParams } from './chat-insert-batch';

/**
 * The guarded write (a write without the session lock): the session UPDATE matches only if the session is
 * where the snapshot saw it (next sequence, active leaf, not a compaction snapshot); the provider calls and
 * messages ride on it, so nothing is inserted unless it matched. Run as prepared statements (parsing and
 * planning this CTE cost more than running it), so their texts are fixed: one per row count for a single
 * exchange (one call, up to MAX_VALUES_MESSAGES messages: values bound directly), else one with a JSON
 * array per table (a batch of exchanges, a long tool loop). Each text is prepared on each connection.
 */
const GUARDED_UPDATE = `UPDATE chat_sessions SET next_sequence = $1, message_count = message_count + $2, provider_call_count = provider_call_count + $3,
         last_model = $4, last_provider = $5, last_cost_micros_usd = $6, last_request_id = $7, active_leaf_id = $8, updated_at = now()
       WHERE id = $9 AND tenant_id = $10 AND next_sequence = $11 AND active_leaf_id IS NOT DISTINCT FROM $12::text AND NOT pre_compression_snapshot
       RETURNING updated_at`;
const GUARDED_PARAMS = 12;
const MAX_VALUES_MESSAGES = 4;
const guardedStatements = new Map<string, PreparedStatement>();

const fitsValues = (calls: number, messages: number) => calls === 1 && messages >= 1 && messages <= MAX_VALUES_MESSAGES;

/** The statement for `messages` rows bound as values (with one call), or with JSON arrays ('json'). */
function guardedStatement(asyncCommit: boolean, messages: number | 'json'): PreparedStatement {
  const key = `${asyncCommit}:${messages}`;
  let statement = guardedStatements.get(key);
  if (!statement) {
    const first = GUARDED_PARAMS + 1;
    const inserts =
      messages === 'json'
        ? [
            insertFromJsonSql('chat_session_provider_calls', CALL_COLUMNS_INSERT, `$${first}`, 'g'),
            insertFromJsonSql('chat_session_messages', MESSAGE_COLUMNS_INSERT, `$${first + 1}`, 'g'),
          ]
        : [
            insertFromValuesSql('chat_session_provider_calls', CALL_COLUMNS_INSERT, 1, first, 'g'),
            insertFromValuesSql('chat_session_messages', MESSAGE_COLUMNS_INSERT, messages, first + CALL_COLUMNS_INSERT.length, 'g'),
          ];
    const commit = asyncCommit ? `, set_config('synchronous_commit', 'off', true) AS async_commit` : '';
    statement = new PreparedStatement(`WITH g AS (${GUARDED_UPDATE}), w0 AS (${inserts[0]}), w1 AS (${inserts[1]}) SELECT updated_at${commit} FROM g`);
    guardedStatements.set(key, statement);
  }
  return statement;
}

/**
 * Runs the guarded write: `sessionParams` are the GUARDED_UPDATE's 12 parameters, then the call and message
 * rows. Answers the session's new `updated_at` row, or no row when the session had moved (nothing written).
 */
export async function runGuardedWrite(
  dataSource: DataSource,
  asyncCommit: boolean,
  sessionParams: unknown[],
  calls: Array<Record<string, unknown>>,
  messages: Array<Record<string, unknown>>,
): Promise<Record<string, unknown>[]> {
  const params = [...sessionParams];
  const values = fitsValues(calls.length, messages.length);
  if (values) {
    valuesParams(CALL_COLUMNS_INSERT, calls, params);
    valuesParams(MESSAGE_COLUMNS_INSERT, messages, params);
  } else params.push(storableJson(calls), storableJson(messages));
  return queryPrepared(dataSource, guardedStatement(asyncCommit, values ? messages.length : 'json'), params);
}

/** Inserts a session row (a new conversation, or a compaction's continuation). */
export async function insertSessionRow(m: EntityManager, row: ChatSessionRow): Promise<void> {
  await m.query(
    `INSERT INTO chat_sessions (id, tenant_id, title, system_prompt, user_name, active_leaf_id, next_sequence, message_count, provider_call_count,
       parent_session_id, lineage_root_id, lineage_tip_id, compression_segment_count, continuation_session_id, pre_compression_snapshot, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)`,
    [
      row.id,
      row.tenantId,
      row.title,
      row.systemPrompt,
      row.userName,
      row.activeLeafId,
      row.nextSequence,
      row.messageCount,
      row.providerCallCount,
      row.parentSessionId,
      row.lineageRootId,
      row.lineageTipId,
      row.compressionSegmentCount,
      row.continuationSessionId,
      row.preCompressionSnapshot,
      row.createdAt,
    ],
  );
}
