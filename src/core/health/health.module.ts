import { Global, Module } from '@nestjs/common';
import { MetricsService } from '@core/metrics/metrics.service';
import { HealthService } from './health.service';
import { SystemInfoRegistry } from './system-info.registry';

/** Services behind health, readiness, metrics and stats; both roles import it (controllers are api-only). */
@Global()
@Module({
  providers: [HealthService, MetricsService, SystemInfoRegistry],
  exports: [HealthService, MetricsService, SystemInfoRegistry],
})
export class HealthModule {}
