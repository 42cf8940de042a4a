import { Injectable } from '@nestjs/common';
import { ModelCapabilitiesService } from '@modules/providers';
import { ModelDiscoveryService } from '@modules/providers';
import { ProviderReadinessService, servedModels } from '@modules/providers';
import { ProviderRegistryService } from '@modules/providers';

/** GET /v1/models: every model known to configured providers, with Hecate metadata (docs/api.md, "GET /v1/models"). */
@Injectable()
export class ModelsService {
  constructor(
    private readonly registry: ProviderRegistryService,
    private readonly discovery: ModelDiscoveryService,
    private readonly readiness: ProviderReadinessService,
    private readonly capabilities: ModelCapabilitiesService,
  ) {}

  async list(refresh: boolean) {
    const providers = this.registry.list();
    const states = await Promise.all(providers.map((p) => (refresh ? this.discovery.refresh(p) : this.discovery.ensure(p))));
    const rows = [];
    for (let i = 0; i < providers.length; i++) {
      const p = providers[i];
      const d = states[i];
      const served = servedModels(p, d);
      const block = this.readiness.routingBlock(p, d);
      const created = Math.floor(p.createdAt.getTime() / 1000);
      for (const model of served.models) {
        rows.push({
          id: model,
          object: 'model',
          created,
          owned_by: p.id,
          metadata: {
            provider: p.id,
            provider_kind: p.kind,
            default: model === p.defaultModel,
            discovery_source: served.source,
            capabilities: this.capabilities.effective(p.id, model),
            readiness: {
              routing_ready: block === undefined,
              ...(block ? { routing_blocked_reason: block } : {}),
              credential_state: p.credentialState,
            },
          },
        });
      }
    }
    return rows;
  }
}
