/** The providers module's public face: other modules and the composition root import `@modules/providers`, never its files. */
export { LlmClient } from './llm-client';
export { ModelCapabilitiesController } from './model-capabilities.controller';
export { continuesPrefill, ModelCapabilitiesService } from './model-capabilities.service';
export type { EffectiveCapabilities } from './model-capabilities.service';
export { ModelDiscoveryService } from './model-discovery.service';
export type { DiscoveryState } from './model-discovery.service';
export { PricingController } from './pricing.controller';
export { PricingService } from './pricing.service';
export { ProviderHealthService } from './provider-health.service';
export { ProviderReadinessService, servedModels } from './provider-readiness.service';
export type { RoutingBlockReason } from './provider-readiness.service';
export { ProviderRegistryService } from './provider-registry.service';
export { ProviderSettingsController } from './provider-settings.controller';
export { ProvidersController } from './providers.controller';
export { ProvidersModule } from './providers.module';
export type { RuntimeProvider } from './runtime-provider';
export { UpstreamError, transportError } from './upstream-error';
