import '@core/telemetry/instrumentation';
import { ConfigValidationError } from '@core/config/config.loader';
import { processConfig } from '@core/config/env';
import { createDataSource } from '@core/database/data-source.factory';
import { migrateEmbedded, migrateWithLock } from '@core/database/migrator';
import { createRootLogger } from '@core/logging/logger';

/** `npm run migrate`: applies pending migrations once (the Helm pre-install/pre-upgrade Job). */
async function main(): Promise<void> {
  const config = processConfig();
  const log = createRootLogger(config.telemetry.logLevel, 'hecate-migrate', undefined, config.telemetry.logFormat);
  const dataSource = await createDataSource({
    url: config.database.url,
    dataDir: config.database.dataDir,
    poolSize: 2,
    entities: [],
    applicationName: 'hecate-migrate',
  });
  await dataSource.initialize();
  try {
    const applied = config.mode === 'scaled' ? await migrateWithLock(dataSource) : await migrateEmbedded(dataSource);
    log.info({ applied, storage: config.mode === 'scaled' ? 'postgres' : 'pglite' }, applied.length ? 'migrations applied' : 'database is up to date');
  } finally {
    await dataSource.destroy();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof ConfigValidationError ? err.message : `migrate failed: ${err instanceof Error ? err.message : String(err)}`}\n`);
    process.exit(1);
  },
);
