/**
 * Inserts a chat transaction has not sent yet. They are rendered when they go out: as a plain
 * `INSERT … VALUES` (or a data-modifying CTE of the statement that follows), or — for a write without the
 * session lock — as `INSERT … SELECT … FROM <guard>`, so nothing is inserted unless the guarding UPDATE
 * matched.
 */
export interface InsertBatch {
  table: string;
  columns: readonly string[];
  /** Postgres type of each column (every parameter is cast: `SELECT $n` has no target type to infer). */
  types: readonly string[];
  rows: unknown[][];
}

export const MESSAGE_INSERT = {
  table: 'chat_session_messages',
  columns: [
    'id', 'session_id', 'sequence', 'parent_id', 'replay_count', 'replay_chars', 'role', 'status', 'kind',
    'produced_by_call_id', 'message_json', 'error_json', 'client_request_id', 'created_at', 'updated_at',
  ],
  types: ['text', 'text', 'int', 'text', 'int', 'bigint', 'text', 'text', 'text', 'text', 'jsonb', 'jsonb', 'text', 'timestamptz', 'timestamptz'],
} as const;

export const CALL_INSERT = {
  table: 'chat_session_provider_calls',
  columns: [
    'id', 'session_id', 'request_id', 'provider', 'provider_kind', 'model', 'requested_model', 'route_reason', 'status',
    'cost_micros_usd', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'created_at',
  ],
  types: ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'int', 'int', 'int', 'timestamptz'],
} as const;

/** Appends the batch's values to `params` and answers its SQL. */
export function renderInsert(b: InsertBatch, params: unknown[], guard?: string): string {
  const tuples = b.rows.map((row) =>
    row
      .map((value, i) => {
        params.push(value);
        return `$${params.length}::${b.types[i]}`;
      })
      .join(', '),
  );
  const head = `INSERT INTO ${b.table} (${b.columns.join(', ')})`;
  if (!guard) return `${head} VALUES ${tuples.map((t) => `(${t})`).join(', ')}`;
  return `${head} ${tuples.map((t) => `SELECT ${t} FROM ${guard}`).join(' UNION ALL ')}`;
}

/** Shifts `$n` placeholders of a statement written on its own by the parameters already collected. */
export function shiftParams(sql: string, own: unknown[], params: unknown[]): string {
  const offset = params.length;
  params.push(...own);
  return sql.replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
}
