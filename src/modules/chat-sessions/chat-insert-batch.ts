/**
 * Inserts a chat transaction has not sent yet. They go out as one `jsonb_populate_recordset` parameter
 * per table (a statement with a handful of parameters plans in a fraction of the time of one with a
 * parameter per value), either with the next statement of the transaction, or — for a write without the
 * session lock — joined to the guarding UPDATE, so nothing is inserted unless it matched.
 */
export interface InsertBatch {
  table: 'chat_session_messages' | 'chat_session_provider_calls';
  columns: readonly string[];
  rows: Array<Record<string, unknown>>;
}

export const MESSAGE_COLUMNS_INSERT = [
  'id', 'session_id', 'sequence', 'parent_id', 'replay_count', 'replay_chars', 'role', 'status', 'kind',
  'produced_by_call_id', 'message_json', 'error_json', 'client_request_id', 'created_at', 'updated_at',
] as const;

export const CALL_COLUMNS_INSERT = [
  'id', 'session_id', 'request_id', 'provider', 'provider_kind', 'model', 'requested_model', 'route_reason', 'status',
  'cost_micros_usd', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'created_at',
] as const;

/** INSERT … SELECT of `table`'s rows from the JSON array in `placeholder` (`guard`: a CTE that must have a row). */
export function insertFromJsonSql(table: InsertBatch['table'], columns: readonly string[], placeholder: string, guard?: string): string {
  const from = `jsonb_populate_recordset(NULL::${table}, ${placeholder}::jsonb) r${guard ? `, ${guard}` : ''}`;
  return `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.map((c) => `r.${c}`).join(', ')} FROM ${from}`;
}

/** Appends the batch's one parameter to `params` and answers its SQL (`guard`: a CTE that must have a row). */
export function renderInsert(b: InsertBatch, params: unknown[], guard?: string): string {
  params.push(JSON.stringify(b.rows));
  return insertFromJsonSql(b.table, b.columns, `$${params.length}`, guard);
}

/** Shifts `$n` placeholders of a statement written on its own by the parameters already collected. */
export function shiftParams(sql: string, own: unknown[], params: unknown[]): string {
  const offset = params.length;
  params.push(...own);
  return sql.replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
}
