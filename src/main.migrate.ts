import '@core/telemetry/instrumentation';
import { ConfigValidationError } from '@core/config/config.loader';
import { processConfig } from '@core/config/env';
import { migrateConfigured } from '@core/database/migrator';
import { createRootLogger } from '@core/logging/logger';

/** `npm run migrate`: applies pending migrations once (the Helm pre-install/pre-upgrade Job). */
async function main(): Promise<void> {
  const config = processConfig();
  const log = createRootLogger(config.telemetry.logLevel, 'hecate-migrate', undefined, config.telemetry.logFormat);
  const { applied, storage } = await migrateConfigured(config.database, 'hecate-migrate');
  log.info({ applied, storage }, applied.length ? 'migrations applied' : 'database is up to date');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigValidationError ? err.message : `migrate failed: ${err instanceof Error ? err.message : String(err)}`}\n`);
    process.exit(1);
  },
);
