import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ApiEnvelope } from '@core/http/openapi';
import { ProviderModelDto, ProviderPresetDto, ProviderStatusDto } from './provider-responses.dto';
import { ProviderModelsService } from './provider-models.service';
import { PROVIDER_PRESETS, toPresetResponse } from './provider-presets';
import { ProviderReadinessService } from './provider-readiness.service';

const truthy = (v: string | undefined): boolean => v === '1' || v === 'true';

@Controller('hecate/v1/providers')
export class ProvidersController {
  constructor(
    private readonly readiness: ProviderReadinessService,
    private readonly models: ProviderModelsService,
  ) {}

  @ApiEnvelope('provider_presets', [ProviderPresetDto])
  @ApiOperation({ summary: 'List the provider presets' })
  @Get('presets')
  presets() {
    return { object: 'provider_presets', data: PROVIDER_PRESETS.map(toPresetResponse) };
  }

  @ApiEnvelope('provider_status', [ProviderStatusDto])
  @ApiOperation({ summary: "Get every provider's status" })
  @Get('status')
  async status(@Query('refresh') refresh?: string) {
    return { object: 'provider_status', data: await this.readiness.statusAll(truthy(refresh)) };
  }

  @ApiEnvelope('provider_models', [ProviderModelDto])
  @ApiOperation({ summary: "List a provider's models" })
  @Get(':provider_id/models')
  async providerModels(@Param('provider_id') id: string) {
    return { object: 'provider_models', data: await this.models.models(id) };
  }
}
