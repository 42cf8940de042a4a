import { Injectable } from '@nestjs/common';
import { ModelCapabilitiesService } from './model-capabilities.service';
import { ModelDiscoveryService } from './model-discovery.service';
import { PricingService, toPriceRecord } from './pricing.service';
import { servedModels } from './provider-readiness.service';
import { ProviderRegistryService } from './provider-registry.service';
import { ProviderNotFoundError } from './providers.errors';

/**
 * `GET /hecate/v1/providers/{provider_id}/models`: the models a provider serves now, each with the capabilities and the price
 * routing and billing use (the same precedence: override > probe > catalog > provider; manual price > built-in).
 */
@Injectable()
export class ProviderModelsService {
  constructor(
    private readonly registry: ProviderRegistryService,
    private readonly discovery: ModelDiscoveryService,
    private readonly capabilities: ModelCapabilitiesService,
    private readonly pricing: PricingService,
  ) {}

  async models(id: string) {
    const p = this.registry.get(id);
    if (!p) throw new ProviderNotFoundError(id);
    const { models } = servedModels(p, await this.discovery.ensure(p));
    return models.map((model) => ({
      provider: p.id,
      model,
      capabilities: this.capabilities.effective(p.id, model),
      price: toPriceRecord(p.id, model, this.pricing.price(p.id, p.kind, model)),
    }));
  }
}
