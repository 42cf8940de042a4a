import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { ApiEnvelope } from '@core/http/openapi';
import { ApiKeyResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto } from './api-key.dto';
import { ApiKeyService } from './api-key.service';
import { CurrentPrincipal } from './current-principal.decorator';

@Controller('hecate/v1/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeyService) {}

  @ApiEnvelope('api_key', CreatedApiKeyResponseDto)
  @ApiOperation({ summary: 'Create an API key' })
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateApiKeyDto) {
    return { object: 'api_key', data: await this.keys.create(caller, dto) };
  }

  @ApiEnvelope('list', [ApiKeyResponseDto])
  @ApiOperation({ summary: 'List API keys' })
  @Get()
  async list(@CurrentPrincipal() caller: Principal) {
    return { object: 'list', data: await this.keys.list(caller) };
  }

  @ApiEnvelope('api_key', ApiKeyResponseDto)
  @ApiOperation({ summary: 'Revoke an API key' })
  @Delete(':key_id')
  async revoke(@CurrentPrincipal() caller: Principal, @Param('key_id', new ParseUUIDPipe()) id: string) {
    return { object: 'api_key', data: await this.keys.revoke(caller, id) };
  }
}
