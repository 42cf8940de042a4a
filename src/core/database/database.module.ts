import { DynamicModule, Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { createDataSource } from './data-source.factory';
import { PendingMigrationsError } from './database.errors';
import { registerEntities, registeredEntities } from './entity-registry';
import { migrateEmbedded, migrateWithLock, pendingMigrations } from './migrator';

/** Opens the DataSource and applies the mode's migration policy before anything else uses it. */
export async function openDatabase(config: AppConfig, role: string): Promise<DataSource> {
  const dataSource = await createDataSource({
    url: config.database.url,
    dataDir: config.database.dataDir,
    poolSize: config.database.poolSize,
    entities: registeredEntities(),
    applicationName: `hecate-${role}`,
  });
  await dataSource.initialize();
  const log = rootLogger();
  if (config.mode === 'embedded') {
    const applied = await migrateEmbedded(dataSource);
    if (applied.length > 0) log.info({ applied }, 'embedded database migrated');
    return dataSource;
  }
  if (config.database.migrateOnBoot) {
    const applied = await migrateWithLock(dataSource);
    if (applied.length > 0) log.info({ applied }, 'migrated on boot under advisory lock');
    return dataSource;
  }
  const pending = await pendingMigrations(dataSource);
  if (pending.length > 0) {
    await dataSource.destroy();
    throw new PendingMigrationsError(pending);
  }
  return dataSource;
}

@Injectable()
class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}
  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

@Global()
@Module({})
export class DatabaseModule {
  /** The DataSource is opened by the entrypoint (so boot fails before Nest starts) and handed in. */
  static forRoot(dataSource: DataSource): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [{ provide: DataSource, useValue: dataSource }, DataSourceCloser],
      exports: [DataSource],
    };
  }

  /** Declares a module's entities; call from the module file (`imports: [DatabaseModule.forFeature([...])]`). */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  static forFeature(entities: Function[]): DynamicModule {
    registerEntities(entities);
    return { module: DatabaseModule };
  }
}
