export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `database has ${pending.length} pending migration(s): ${pending.join(', ')}. ` +
        'Run `npm run migrate` (the Helm pre-upgrade Job does this) or set GATEWAY_MIGRATE_ON_BOOT=true.',
    );
    this.name = 'PendingMigrationsError';
  }
}

/**
 * Connection-level failures (terminated backends, restarts, pool exhaustion on reconnect; TypeORM's released query runner
 * when a transaction's connection died under it): retrying is right.
 */
const CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
const CONNECTION_TEXT =
  /terminating connection|Connection terminated|Query runner already released|connection.*(closed|ended)|Client has encountered a connection error|timeout exceeded when trying to connect|ECONNRESET|ECONNREFUSED|Client was closed and is not queryable/i;
/** Values the database refuses to store (NUL in text/jsonb, invalid UTF-8): the request's fault, not the server's. */
const UNSTORABLE_CODES = new Set(['22021', '22P05']);

type DbErrorLike = { code?: string; driverError?: { code?: string; message?: string }; message?: string };
const codeOf = (err: unknown): string | undefined => {
  const e = err as DbErrorLike;
  return e?.driverError?.code ?? e?.code;
};

export function isDatabaseConnectionError(err: unknown): boolean {
  const code = codeOf(err);
  if (code && CONNECTION_CODES.has(code)) return true;
  const e = err as DbErrorLike;
  return CONNECTION_TEXT.test(`${e?.message ?? ''} ${e?.driverError?.message ?? ''}`);
}

export function isUnstorableValueError(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && UNSTORABLE_CODES.has(code);
}

/** A unique index refused the row (23505): two writers raced for one key; the loser's answer is a conflict, not a 500. */
export function isUniqueViolation(err: unknown): boolean {
  return codeOf(err) === '23505';
}
