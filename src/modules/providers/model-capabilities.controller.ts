import { RequireScope } from '@core/http/auth/public.decorator';
import { Body, Controller, Delete, HttpCode, Post, Put, Query } from '@nestjs/common';
import { CapabilityKeyQuery, CapabilityOverrideDto, CapabilityProbeDto } from './model-capabilities.dto';
import { ModelCapabilitiesService } from './model-capabilities.service';

@Controller('hecate/v1/model-capabilities')
export class ModelCapabilitiesController {
  constructor(private readonly capabilities: ModelCapabilitiesService) {}

  @RequireScope('admin')
  @Put('overrides')
  async override(@Body() dto: CapabilityOverrideDto) {
    return { object: 'model_capability', data: await this.capabilities.setOverride(dto) };
  }

  @RequireScope('admin')
  @Delete('overrides')
  async removeOverride(@Query() q: CapabilityKeyQuery) {
    const { removed, effective } = await this.capabilities.deleteOverride(q.provider, q.model);
    return { object: 'model_capability', data: { provider: q.provider, model: q.model, removed, ...effective } };
  }

  @RequireScope('admin')
  @Post('probes')
  @HttpCode(200)
  async probe(@Body() dto: CapabilityProbeDto) {
    return { object: 'model_capability', data: await this.capabilities.recordProbe(dto) };
  }
}
