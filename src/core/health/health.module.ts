import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { MetricsService } from '@core/metrics/metrics.service';
import { HealthService } from './health.service';
import { SystemInfoRegistry } from './system-info.registry';

/** Services behind health, readiness, metrics and stats; both roles import it (controllers are api-only). */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  providers: [HealthService, MetricsService, SystemInfoRegistry],
  exports: [HealthService, MetricsService, SystemInfoRegistry],
})
export class HealthModule {}
