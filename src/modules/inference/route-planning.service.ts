import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ModelCapabilitiesService } from '@modules/providers';
import { ModelDiscoveryService } from '@modules/providers';
import { ProviderHealthService } from '@modules/providers';
import { ProviderReadinessService } from '@modules/providers';
import { ProviderRegistryService } from '@modules/providers';
import { planRoute, RoutePlan, RouteRequest } from './route-planner';

/** Feeds the pure planner (route-planner.ts) with the in-memory provider state: no I/O once discovery is warm. */
@Injectable()
export class RoutePlanningService {
  constructor(
    private readonly config: AppConfig,
    private readonly registry: ProviderRegistryService,
    private readonly discovery: ModelDiscoveryService,
    private readonly readiness: ProviderReadinessService,
    private readonly health: ProviderHealthService,
    private readonly capabilities: ModelCapabilitiesService,
  ) {}

  /** Waits for model discovery only for providers never discovered yet (cold start). */
  async plan(req: RouteRequest): Promise<RoutePlan> {
    const providers = this.registry.list();
    const cold = providers.filter((p) => this.discovery.peek(p) === undefined);
    if (cold.length > 0) await Promise.all(cold.map((p) => this.discovery.ensure(p)));
    return planRoute(
      {
        providers,
        discovery: (p) => this.discovery.peek(p),
        block: (p, d) => this.readiness.routingBlock(p, d),
        order: (p) => this.health.orderKey(p.id),
        capabilities: (provider, model) => this.capabilities.effective(provider, model),
        defaultModel: this.config.gateway.defaultModel,
        failover: this.config.gateway.failoverEnabled,
      },
      req,
    );
  }
}
