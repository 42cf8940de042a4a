import { Module } from '@nestjs/common';
import { ProvidersModule } from '@modules/providers';
import { UsageModule } from '@modules/usage';
import { InferenceService } from './inference.service';
import { RoutePlanningService } from './route-planning.service';

/** The one model-calling service (DESIGN §5, §11.1): routing, retries, failover, cost, usage, traces, live tee. */
@Module({
  imports: [ProvidersModule, UsageModule],
  providers: [RoutePlanningService, InferenceService],
  exports: [InferenceService, RoutePlanningService],
})
export class InferenceModule {}
