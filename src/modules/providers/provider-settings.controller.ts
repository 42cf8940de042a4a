import { Body, Controller, Delete, Get, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
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
  @ApiOperation({ summary: 'List the configured providers' })
  @Get()
  list() {
    return { object: 'providers', data: this.settings.list() };
  }

  @ApiEnvelope('provider', ProviderDto)
  @ApiOperation({ summary: 'Add a provider' })
  @Post()
  @RequireScope('admin')
  async create(@Body() dto: CreateProviderDto) {
    return { object: 'provider', data: await this.settings.create(dto) };
  }

  @ApiEnvelope('local_provider_discovery', [LocalProviderDiscoveryDto])
  @ApiOperation({ summary: 'Discover local providers' })
  @Get('local-discovery')
  async localDiscovery() {
    return { object: 'local_provider_discovery', data: await this.local.discover() };
  }

  @ApiEnvelope('provider', ProviderDto)
  @ApiOperation({ summary: "Get a provider's settings" })
  @Get(':provider_id')
  get(@Param('provider_id') id: string) {
    return { object: 'provider', data: this.settings.get(id) };
  }

  @ApiEnvelope('provider', ProviderDto)
  @ApiOperation({ summary: "Update a provider's settings" })
  @Patch(':provider_id')
  @RequireScope('admin')
  async update(@Param('provider_id') id: string, @Body() dto: UpdateProviderDto) {
    return { object: 'provider', data: await this.settings.update(id, dto) };
  }

  @ApiEnvelope('provider', ProviderDto)
  @ApiOperation({ summary: "Set a provider's API key" })
  @Put(':provider_id/api-key')
  @RequireScope('admin')
  async setApiKey(@Param('provider_id') id: string, @Body() dto: SetProviderKeyDto) {
    return { object: 'provider', data: await this.settings.setApiKey(id, dto) };
  }

  @ApiEnvelope('provider', ProviderDeletedDto)
  @ApiOperation({ summary: 'Remove a provider' })
  @Delete(':provider_id')
  @RequireScope('admin')
  async remove(@Param('provider_id') id: string) {
    return { object: 'provider', data: await this.settings.remove(id) };
  }
}
