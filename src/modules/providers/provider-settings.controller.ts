import { Body, Controller, Delete, Get, Param, Patch, Post, Put } from '@nestjs/common';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { LocalProviderDiscoveryDto, ProviderDeletedDto, ProviderDto } from './provider-responses.dto';
import { LocalDiscoveryService } from './local-discovery.service';
import { CreateProviderDto, SetProviderKeyDto, UpdateProviderDto } from './provider-settings.dto';
import { ProviderSettingsService } from './provider-settings.service';

/** Providers are shared by every tenant: reads need `operator`, writes `admin`. */
@Controller('hecate/v1/settings/providers')
export class ProviderSettingsController {
  constructor(
    private readonly settings: ProviderSettingsService,
    private readonly local: LocalDiscoveryService,
  ) {}

  @ApiEnvelope('providers', [ProviderDto])
  @Get()
  list() {
    return { object: 'providers', data: this.settings.list() };
  }

  @ApiEnvelope('provider', ProviderDto)
  @Post()
  @RequireScope('admin')
  async create(@Body() dto: CreateProviderDto) {
    return { object: 'provider', data: await this.settings.create(dto) };
  }

  @ApiEnvelope('local_provider_discovery', [LocalProviderDiscoveryDto])
  @Get('local-discovery')
  async localDiscovery() {
    return { object: 'local_provider_discovery', data: await this.local.discover() };
  }

  @ApiEnvelope('provider', ProviderDto)
  @Get(':id')
  get(@Param('id') id: string) {
    return { object: 'provider', data: this.settings.get(id) };
  }

  @ApiEnvelope('provider', ProviderDto)
  @Patch(':id')
  @RequireScope('admin')
  async update(@Param('id') id: string, @Body() dto: UpdateProviderDto) {
    return { object: 'provider', data: await this.settings.update(id, dto) };
  }

  @ApiEnvelope('provider', ProviderDto)
  @Put(':id/api-key')
  @RequireScope('admin')
  async setApiKey(@Param('id') id: string, @Body() dto: SetProviderKeyDto) {
    return { object: 'provider', data: await this.settings.setApiKey(id, dto) };
  }

  @ApiEnvelope('provider', ProviderDeletedDto)
  @Delete(':id')
  @RequireScope('admin')
  async remove(@Param('id') id: string) {
    return { object: 'provider', data: await this.settings.remove(id) };
  }
}
