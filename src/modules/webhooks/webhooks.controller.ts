import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import {
  CreateWebhookDto,
  ListWebhooksQueryDto,
  PatchWebhookDto,
  WebhookCreatedDto,
  WebhookDeletedDto,
  WebhookDeliveryResponseDto,
  WebhookResponseDto,
} from './webhooks.dto';
import { WebhooksService } from './webhooks.service';

const PAGE = { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' } };

/** Webhooks (docs/webhooks.md): tenant-scoped like schedules and saved agents. */
@Controller('hecate/v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @ApiEnvelope('webhook', WebhookCreatedDto)
  @ApiOperation({ summary: 'Create a webhook (its secret is shown once)' })
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateWebhookDto) {
    return { object: 'webhook', data: await this.webhooks.create(p, dto) };
  }

  @ApiEnvelope('webhooks', [WebhookResponseDto], { extra: PAGE })
  @ApiOperation({ summary: 'List the webhooks' })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListWebhooksQueryDto) {
    return { object: 'webhooks', ...(await this.webhooks.list(p.tenantId, q)) };
  }

  @ApiEnvelope('webhook', WebhookResponseDto)
  @ApiOperation({ summary: 'Get a webhook' })
  @Get(':webhook_id')
  async get(@CurrentPrincipal() p: Principal, @Param('webhook_id') id: string) {
    return { object: 'webhook', data: await this.webhooks.get(p.tenantId, id) };
  }

  @ApiEnvelope('webhook', WebhookResponseDto)
  @ApiOperation({ summary: "Update a webhook's fields, or enable it again" })
  @Patch(':webhook_id')
  async patch(@CurrentPrincipal() p: Principal, @Param('webhook_id') id: string, @Body() dto: PatchWebhookDto) {
    return { object: 'webhook', data: await this.webhooks.update(p.tenantId, id, dto) };
  }

  @ApiEnvelope('webhook_deleted', WebhookDeletedDto)
  @ApiOperation({ summary: 'Delete a webhook and its delivery log' })
  @Delete(':webhook_id')
  async delete(@CurrentPrincipal() p: Principal, @Param('webhook_id') id: string) {
    return { object: 'webhook_deleted', data: await this.webhooks.delete(p.tenantId, id) };
  }

  @ApiEnvelope('webhook_deliveries', [WebhookDeliveryResponseDto], { extra: PAGE })
  @ApiOperation({ summary: "List a webhook's deliveries" })
  @Get(':webhook_id/deliveries')
  async deliveries(@CurrentPrincipal() p: Principal, @Param('webhook_id') id: string, @Query() q: ListWebhooksQueryDto) {
    return { object: 'webhook_deliveries', ...(await this.webhooks.deliveries(p.tenantId, id, q)) };
  }

  @ApiEnvelope('webhook_delivery', WebhookDeliveryResponseDto)
  @ApiOperation({ summary: 'Send a delivery again' })
  @Post(':webhook_id/deliveries/:delivery_id/redeliver')
  @HttpCode(200)
  async redeliver(@CurrentPrincipal() p: Principal, @Param('webhook_id') id: string, @Param('delivery_id') deliveryId: string) {
    return { object: 'webhook_delivery', data: await this.webhooks.redeliver(p.tenantId, id, deliveryId) };
  }
}
