import { ApiSchema } from '@nestjs/swagger';
import type { ProviderKind, ProviderProtocol } from '@core/config/groups/gateway.env';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import type { ImageInput, ToolCalling } from './model-catalog';
import type { CapabilitySource } from './model-capability.entity';
import type { EffectiveCapabilities, EffectiveSource, toCapabilityRecord } from './model-capabilities.service';
import type { ProviderModelsService } from './provider-models.service';
import type { LocalDiscoveryService } from './local-discovery.service';
import type { PriceSource, toPriceRecord } from './pricing.service';
import type { toPresetResponse } from './provider-presets';
import type { CheckStatus, ProviderReadinessService, ReadinessCheck, RoutingBlockReason } from './provider-readiness.service';
import type { CircuitState } from './provider-health.service';
import type { toProviderResponse } from './provider-settings.dto';
import type { CredentialState } from './runtime-provider';

/** Wire shapes of the provider routes (docs/api.md §4 providers, presets, status, capabilities, pricing). */

@ApiSchema({ name: 'ProviderPreset' })
export class ProviderPresetDto {
  id!: string;
  name!: string;
  kind!: ProviderKind;
  protocol!: ProviderProtocol;
  base_url!: string;
  base_url_env!: string;
  api_key_env!: string;
  default_model!: string;
  docs_url!: string;
  description!: string;
  env_snippet!: string;
}

/** One readiness check: credentials, models, health or routing, with why and what to do. */
@ApiSchema({ name: 'ProviderReadinessCheck' })
export class ProviderReadinessCheckDto {
  name!: ReadinessCheck['name'];
  status!: CheckStatus;
  reason!: string;
  message!: string;
  operator_action?: string;
}

@ApiSchema({ name: 'ProviderStatus' })
export class ProviderStatusDto {
  name!: string;
  kind!: ProviderKind;
  protocol!: ProviderProtocol;
  status!: string;
  healthy!: boolean;
  base_url!: string;
  default_model!: string | null;
  models!: string[];
  model_count!: number;
  discovery_source!: 'provider' | 'default_model' | 'none';
  credential_state!: CredentialState;
  credential_ready!: boolean;
  routing_ready!: boolean;
  routing_blocked_reason?: RoutingBlockReason;
  readiness_checks!: ProviderReadinessCheckDto[];
  circuit_state!: CircuitState;
  last_error?: string;
  latency_ms?: number;
  cooldown_until?: string;
}

/** A provider as settings show it; its key is never returned (`api_key_configured` says whether one is stored). */
@ApiSchema({ name: 'Provider' })
export class ProviderDto {
  id!: string;
  name!: string;
  display_name!: string;
  preset_id!: string | null;
  custom_name!: string | null;
  kind!: ProviderKind;
  protocol!: ProviderProtocol;
  base_url!: string;
  default_model!: string | null;
  enabled!: boolean;
  source!: 'env' | 'settings';
  env_configured!: boolean;
  credential_state!: CredentialState;
  api_key_configured!: boolean;
  api_key_env!: string;
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'ProviderDeleted' })
export class ProviderDeletedDto {
  id!: string;
  deleted!: boolean;
}

@ApiSchema({ name: 'LocalProviderDiscovery' })
export class LocalProviderDiscoveryDto {
  preset_id!: string;
  name!: string;
  base_url!: string;
  probe_url!: string;
  status!: string;
  http_available!: boolean;
  model_count!: number;
  models!: string[];
  command!: string;
  command_available!: boolean;
  command_path?: string;
}

/** An operator override or a manual probe of one model's capabilities. */
@ApiSchema({ name: 'ModelCapabilityRecord' })
export class ModelCapabilityRecordDto {
  provider!: string;
  model!: string;
  tool_calling!: string | null;
  streaming!: boolean | null;
  max_context_tokens!: number | null;
  image_input!: string | null;
  assistant_prefill!: boolean | null;
  source!: CapabilitySource;
  note!: string | null;
  updated_at!: string;
}

/**
 * The capabilities that apply to one model and where they come from, written once for the two schemas that carry
 * them. It is never a schema itself: were it one, @nestjs/swagger would list its fields before a subclass's own in
 * whichever schema it read second, and ModelCapabilityRemoved's field order would depend on the order of the routes.
 */
abstract class EffectiveCapabilitiesFields {
  tool_calling!: ToolCalling;
  streaming!: boolean;
  max_context_tokens!: number | null;
  image_input!: ImageInput;
  /** null: not known for the model; the protocol's default applies (OpenAI: no, Anthropic: yes unless thinking is on). */
  assistant_prefill!: boolean | null;
  source!: EffectiveSource;
}

/** After an override is removed: what now applies (probe > catalog > provider). */
@ApiSchema({ name: 'ModelCapabilityRemoved' })
export class ModelCapabilityRemovedDto extends EffectiveCapabilitiesFields {
  provider!: string;
  model!: string;
  removed!: boolean;
}

/** A price in micro-USD per 1M tokens. */
@ApiSchema({ name: 'ModelPrice' })
export class ModelPriceDto {
  provider!: string;
  model!: string;
  input_micros_usd_per_million_tokens!: number;
  output_micros_usd_per_million_tokens!: number;
  cached_input_micros_usd_per_million_tokens!: number;
  source!: PriceSource;
  updated_at?: string;
}

/** The capabilities that apply to one model, and where they come from. */
@ApiSchema({ name: 'ModelCapabilities' })
export class ModelCapabilitiesDto extends EffectiveCapabilitiesFields {}

/** A model a provider serves now, with its capabilities and price. */
@ApiSchema({ name: 'ProviderModel' })
export class ProviderModelDto {
  provider!: string;
  model!: string;
  capabilities!: ModelCapabilitiesDto;
  price!: ModelPriceDto;
}

@ApiSchema({ name: 'ModelPriceDeleted' })
export class ModelPriceDeletedDto {
  provider!: string;
  model!: string;
  deleted!: boolean;
}

type _PresetDocumented = Assert<Documents<ProviderPresetDto, ReturnType<typeof toPresetResponse>>>;
type _CheckDocumented = Assert<Documents<ProviderReadinessCheckDto, ReadinessCheck>>;
type _StatusDocumented = Assert<Documents<ProviderStatusDto, Returned<ProviderReadinessService['statusAll']>[number]>>;
type _ProviderDocumented = Assert<Documents<ProviderDto, ReturnType<typeof toProviderResponse>>>;
type _DiscoveryDocumented = Assert<Documents<LocalProviderDiscoveryDto, Returned<LocalDiscoveryService['discover']>[number]>>;
type _RecordDocumented = Assert<Documents<ModelCapabilityRecordDto, ReturnType<typeof toCapabilityRecord>>>;
type _RemovedDocumented = Assert<Documents<ModelCapabilityRemovedDto, EffectiveCapabilities & { provider: string; model: string; removed: boolean }>>;
type _CapabilitiesDocumented = Assert<Documents<ModelCapabilitiesDto, EffectiveCapabilities>>;
type _ProviderModelDocumented = Assert<Documents<ProviderModelDto, Returned<ProviderModelsService['models']>[number]>>;
type _PriceDocumented = Assert<Documents<ModelPriceDto, ReturnType<typeof toPriceRecord>>>;
