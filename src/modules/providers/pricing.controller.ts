import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { ModelPriceDeletedDto, ModelPriceDto } from './provider-responses.dto';
import { NotFoundError } from '@core/http/domain-error';
import { PutPriceDto } from './pricing.dto';
import { PricingService } from './pricing.service';

/** Prices apply to every tenant: reads need `operator`, writes `admin`. */
@Controller('hecate/v1/settings/pricing')
export class PricingController {
  constructor(private readonly pricing: PricingService) {}

  @ApiEnvelope('pricing', [ModelPriceDto])
  @ApiOperation({ summary: 'List the price overrides' })
  @Get()
  list() {
    return { object: 'pricing', data: this.pricing.listOverrides() };
  }

  @ApiEnvelope('model_price', ModelPriceDto)
  @ApiOperation({ summary: "Set a model's price" })
  @Put(':provider/:model')
  @RequireScope('admin')
  async put(@Param('provider') provider: string, @Param('model') model: string, @Body() dto: PutPriceDto) {
    return { object: 'model_price', data: await this.pricing.put(provider, model, dto) };
  }

  @ApiEnvelope('model_price', ModelPriceDeletedDto)
  @ApiOperation({ summary: "Remove a model's price override" })
  @Delete(':provider/:model')
  @RequireScope('admin')
  async remove(@Param('provider') provider: string, @Param('model') model: string) {
    if (!(await this.pricing.remove(provider, model))) throw new NotFoundError(`no price override for ${provider}/${model}`);
    return { object: 'model_price', data: { provider, model, deleted: true } };
  }
}
