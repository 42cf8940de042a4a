import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseModule } from '@core/database/database.module';
import { MetricsService } from '@core/metrics/metrics.service';
import { HealthService } from './health.service';
import { QueueProbeEntity } from './queue-probe.entity';
import { QueueProbeRepository } from './queue-probe.repository';
import { QueueProbeService } from './queue-probe.service';
import { SystemInfoRegistry } from './system-info.registry';

/**
 * Services behind health, readiness, metrics, stats and queue probes (the end-to-end check api → queue → worker →
 * Postgres); both roles import it (controllers are api-only, the probe job worker-only).
 */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), DatabaseModule.forFeature([QueueProbeEntity])],
  providers: [HealthService, MetricsService, SystemInfoRegistry, QueueProbeRepository, QueueProbeService],
  exports: [HealthService, MetricsService, SystemInfoRegistry, QueueProbeService],
})
export class HealthModule {}
