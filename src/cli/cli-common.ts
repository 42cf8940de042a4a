import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { ErrorType } from '@contracts/errors';
import { ConfigValidationError } from '@core/config/config.loader';
import { createRootLogger, scrubSecrets } from '@core/logging/logger';

/**
 * A command's failure: the error envelope's stable `type`, what went wrong and what to do about it (its
 * `operator_action`). `usage` marks a command line that does not parse (exit 2 instead of 1).
 */
export class CliError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly fix = '',
    readonly usage = false,
  ) {
    super(message);
    this.name = 'CliError';
  }

  static usage(message: string): CliError {
    return new CliError(ErrorType.InvalidRequest, message, 'see `hecate --help`', true);
  }

  static from(err: unknown): CliError {
    if (err instanceof CliError) return err;
    // node:util parseArgs: an unknown option, a missing value.
    if (err instanceof Error && String((err as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')) return CliError.usage(err.message);
    if (err instanceof ConfigValidationError) {
      return new CliError(ErrorType.InvalidRequest, err.message, 'fix the variables named above (docs/configuration.md)');
    }
    return new CliError(ErrorType.GatewayError, err instanceof Error ? err.message : String(err));
  }
}

/** Prints a failure on stderr (`--json`: the error envelope on stdout); secrets are scrubbed from both. */
export function printError(err: CliError, json: boolean): void {
  const message = scrubSecrets(err.message);
  const fix = scrubSecrets(err.fix);
  if (json) {
    process.stdout.write(`${JSON.stringify({ error: { type: err.type, message, user_message: message, operator_action: fix } })}\n`);
    return;
  }
  process.stderr.write(`hecate: ${message}\n${fix ? `  fix: ${fix}\n` : ''}`);
}

/** A URL fit to print: its password replaced by `***`. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return scrubSecrets(raw);
  }
}

/** The server code a command reuses logs its warnings and errors on stderr: stdout is the command's own output. */
export function logToStderr(): void {
  createRootLogger('warn', 'hecate-cli', pino.destination(2));
}

/**
 * Refuses to open an embedded database another process holds: PGlite opens a data directory in one process at a time,
 * and a second one would corrupt it. A running PGlite keeps `postmaster.pid` in it (a clean stop removes the file).
 */
export function assertEmbeddedFree(dataDir: string, fix: string): void {
  const dir = resolve(dataDir);
  if (!existsSync(join(dir, 'pglite', 'postmaster.pid'))) return;
  throw new CliError(
    ErrorType.Conflict,
    `the embedded database in ${dir} is open in another process (pglite/postmaster.pid is there)`,
    `${fix}; a server killed without a clean stop leaves the file behind: start and stop it once`,
  );
}

/** The Hecate server answering `/healthz` on the configured HOST:PORT (a wildcard HOST is asked on loopback), if any. */
export async function hecateAt(server: { host: string; port: number }): Promise<{ url: string; version: string } | undefined> {
  const host = ['0.0.0.0', '::'].includes(server.host) ? '127.0.0.1' : server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
    .then(async (r) => (r.ok ? ((await r.json()) as { version?: unknown }) : undefined))
    // Refused, timed out, or not JSON: not a Hecate server, which is the answer.
    .catch(() => undefined);
  return typeof health?.version === 'string' ? { url, version: health.version } : undefined;
}
