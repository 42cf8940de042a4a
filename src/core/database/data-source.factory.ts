import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, type ClientConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '@migrations';
import { rootLogger, scrubSecrets } from '@core/logging/logger';

export interface DataSourceSettings {
  /** Postgres URL (scaled mode); undefined selects PGlite in `dataDir`. */
  url: string | undefined;
  dataDir: string;
  poolSize: number;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: Function[];
  applicationName?: string;
}

const INT8_OID = 20;

/**
 * A pool client that always has an 'error' listener. pg emits 'error' on a client whose backend is terminated; the
 * pool listens only while the client is idle and TypeORM only until it releases a checked-out client, so a second
 * error (the FATAL message, then the closed socket) or one between those hands would be an unhandled 'error' event
 * and kill the process. Whoever holds the client still sees the error; its queries fail (answered 503 by the
 * HTTP filter) and the pool replaces it.
 */
class ResilientClient extends Client {
  constructor(config?: ClientConfig) {
    super(config);
    this.on('error', (err: Error) => rootLogger().debug({ err: scrubSecrets(err.message) }, 'postgres client error; the pool replaces the client'));
  }
}

/** Builds (does not initialise) the DataSource for either backend: same entities, same migrations. */
export async function createDataSource(settings: DataSourceSettings): Promise<DataSource> {
  const common = {
    type: 'postgres' as const,
    entities: settings.entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
  };
  if (settings.url) {
    const options: DataSourceOptions = {
      ...common,
      url: settings.url,
      poolSize: settings.poolSize,
      parseInt8: true,
      applicationName: settings.applicationName ?? 'hecate',
      connectTimeoutMS: 5000,
      // A Postgres restart or pg_terminate_backend must not crash the process: pg emits 'error' on idle
      // clients; the pool discards them and the next query opens a new connection.
      poolErrorHandler: (err: unknown) => rootLogger().warn({ err: scrubSecrets(String(err)) }, 'postgres pool client error; it will be replaced'),
      extra: { idleTimeoutMillis: 30_000, keepAlive: true, Client: ResilientClient },
    };
    return new DataSource(options);
  }
  const dataDir = resolve(settings.dataDir, 'pglite');
  mkdirSync(dataDir, { recursive: true });
  // Required here, not imported: the scaled processes never load PGlite's JavaScript (bench/server-start, RSS).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { openPglite } = require('./pglite-template') as typeof import('./pglite-template');
  const { pgliteTypeormDriver } = require('./pglite-pool') as typeof import('./pglite-pool');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const db = await openPglite(dataDir, { [INT8_OID]: (value: string) => Number(value) });
  return new DataSource({ ...common, driver: pgliteTypeormDriver(db) } as DataSourceOptions);
}
