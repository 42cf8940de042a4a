import { Body, Controller, Delete, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { ModelCapabilityRecordDto, ModelCapabilityRemovedDto } from './provider-responses.dto';
import { CapabilityKeyQuery, CapabilityOverrideDto, CapabilityProbeDto } from './model-capabilities.dto';
import { ModelCapabilitiesService } from './model-capabilities.service';

/** Capability overrides and probes change routing for every tenant: `admin`. */
@Controller('hecate/v1/model-capabilities')
@RequireScope('admin')
export class ModelCapabilitiesController {
  constructor(private readonly capabilities: ModelCapabilitiesService) {}

  @ApiEnvelope('model_capability', ModelCapabilityRecordDto)
  @ApiOperation({ summary: "Override a model's capabilities" })
  @Put('overrides')
  async override(@Body() dto: CapabilityOverrideDto) {
    return { object: 'model_capability', data: await this.capabilities.setOverride(dto) };
  }

  @ApiEnvelope('model_capability', ModelCapabilityRemovedDto)
  @ApiOperation({ summary: "Remove a model's capability override" })
  @Delete('overrides')
  async removeOverride(@Query() q: CapabilityKeyQuery) {
    const { removed, effective } = await this.capabilities.deleteOverride(q.provider, q.model);
    return { object: 'model_capability', data: { provider: q.provider, model: q.model, removed, ...effective } };
  }

  @ApiEnvelope('model_capability', ModelCapabilityRecordDto)
  @ApiOperation({ summary: "Probe a model's capabilities" })
  @Post('probes')
  @HttpCode(200)
  async probe(@Body() dto: CapabilityProbeDto) {
    return { object: 'model_capability', data: await this.capabilities.recordProbe(dto) };
  }
}
