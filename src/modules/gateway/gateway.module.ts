import { Module } from '@nestjs/common';
import { ProvidersModule } from '@modules/providers/providers.module';
import { UsageModule } from '@modules/usage/usage.module';
import { GatewayRouterService } from './gateway-router.service';
import { IngressService } from './ingress.service';
import { ModelsService } from './models.service';
import { RateLimiterService } from './rate-limiter.service';
import { RoutePlanningService } from './route-planning.service';

/** The /v1 ingress and the router other modules call (GatewayRouterService). */
@Module({
  imports: [ProvidersModule, UsageModule],
  providers: [RoutePlanningService, GatewayRouterService, IngressService, ModelsService, RateLimiterService],
  exports: [GatewayRouterService, IngressService, ModelsService],
})
export class GatewayModule {}
