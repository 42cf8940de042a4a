import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ErrorType } from '@contracts/errors';
import { processConfig } from '@core/config/env';
import { migrateConfigured } from '@core/database/migrator';
import { assertEmbeddedFree, CliError, redactUrl } from './cli-common';

/** `hecate migrate`: what `npm run migrate` does, printed for a person: the database, then each migration applied. */
export async function migrate(argv: string[]): Promise<number> {
  parseArgs({ args: argv, options: {}, strict: true });
  const { database } = processConfig();
  const target = database.url ? `Postgres ${redactUrl(database.url)}` : `the embedded database in ${resolve(database.dataDir)}`;
  if (!database.url) assertEmbeddedFree(database.dataDir, 'stop the server using it (an embedded server migrates its database itself when it starts)');
  process.stdout.write(`migrating ${target}\n`);
  let applied: string[];
  try {
    ({ applied } = await migrateConfigured(database, 'hecate-cli'));
  } catch (err) {
    throw new CliError(
      ErrorType.ServiceUnavailable,
      `migrate failed: ${err instanceof Error ? err.message : String(err)}`,
      database.url
        ? 'check that Postgres answers at DATABASE_URL (`hecate doctor` says what is wrong)'
        : 'check that GATEWAY_DATA_DIR is a directory this user may write (`hecate doctor` says what is wrong)',
    );
  }
  for (const name of applied) process.stdout.write(`applied  ${name}\n`);
  process.stdout.write(applied.length ? `${applied.length} migration(s) applied\n` : 'nothing to apply: the database is up to date\n');
  return 0;
}
