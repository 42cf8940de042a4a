import { DynamicModule, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfigValues } from '@core/config/config.loader';
import { ConfigModule } from '@core/config/config.module';
import { DatabaseModule } from '@core/database/database.module';
import { DeclarationsModule } from '@core/discovery/declarations';
import { HealthModule } from '@core/health/health.module';
import { SseModule } from '@core/http/sse';
import { InfrastructureModule } from '@core/infrastructure.module';
import { LeaseModule } from '@core/lease/lease.module';
import type { RedisConnections } from '@core/redis/redis-connections';

export interface CoreResources {
  config: AppConfigValues;
  dataSource: DataSource;
  redis: RedisConnections | null;
}

/** Configuration, database, the three ports, health services and the declarations scan: what both roles share. */
@Module({})
export class CoreModule {
  static forRoot(resources: CoreResources): DynamicModule {
    return {
      module: CoreModule,
      global: true,
      imports: [
        ConfigModule.forRoot(resources.config),
        DatabaseModule.forRoot(resources.dataSource),
        InfrastructureModule.forRoot(resources.redis),
        HealthModule,
        SseModule,
        LeaseModule,
        DeclarationsModule,
      ],
    };
  }
}
