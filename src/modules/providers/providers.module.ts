import { Module } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { LocalDiscoveryService } from './local-discovery.service';
import { ModelCapabilitiesService } from './model-capabilities.service';
import { ModelCapabilityEntity } from './model-capability.entity';
import { ModelDiscoveryService } from './model-discovery.service';
import { ModelSettingsRepository } from './model-settings.repository';
import { PricingOverrideEntity } from './pricing-override.entity';
import { PricingService } from './pricing.service';
import { ProviderEntity } from './provider.entity';
import { ProviderHealthService } from './provider-health.service';
import { ProviderModelsService } from './provider-models.service';
import { ProviderReadinessService } from './provider-readiness.service';
import { ProviderRegistryService } from './provider-registry.service';
import { ProviderRepository } from './provider.repository';
import { ProviderSecretsService } from './provider-secrets.service';
import { ProviderSettingsService } from './provider-settings.service';

/** Providers: presets, registry, secrets, discovery, health, readiness, capabilities, pricing. */
@Module({
  imports: [DatabaseModule.forFeature([ProviderEntity, ModelCapabilityEntity, PricingOverrideEntity])],
  providers: [
    ProviderRepository,
    ModelSettingsRepository,
    ProviderSecretsService,
    ProviderRegistryService,
    ProviderSettingsService,
    ModelDiscoveryService,
    ProviderHealthService,
    ProviderReadinessService,
    LocalDiscoveryService,
    ModelCapabilitiesService,
    PricingService,
    ProviderModelsService,
  ],
  exports: [
    ProviderRegistryService,
    ProviderSettingsService,
    LocalDiscoveryService,
    ModelDiscoveryService,
    ProviderHealthService,
    ProviderReadinessService,
    ModelCapabilitiesService,
    PricingService,
    ProviderModelsService,
  ],
})
export class ProvidersModule {}
