import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import type { DeliveryRow, DeliveryStatus, WebhookRow, WebhookStatus } from './webhooks.repository';

/** An event type of the public feed (`run.finished`), a family (`run.*`), or `*` for all. */
const EVENT_TYPE = /^(\*|[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?)$/;

/** Public feed event types to deliver: exact (`run.finished`), a family (`approval.*`) or `*`. */
const EventTypes = () =>
  applyDecorators(
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(100),
    ArrayUnique(),
    IsString({ each: true }),
    Matches(EVENT_TYPE, { each: true, message: 'event_types: each must be an event type (run.finished), a family (run.*) or *' }),
  );

/** `POST /hecate/v1/webhooks`. */
export class CreateWebhookDto {
  /** Where deliveries are POSTed: http(s); no loopback or private address unless GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS, never metadata or link-local. */
  @IsString() @MaxLength(2000) url!: string;
  @EventTypes() event_types!: string[];
  @IsOptional() @IsString() @MaxLength(500) description?: string;
}

/** `PATCH /hecate/v1/webhooks/{webhook_id}`; `enabled: true` re-enables a disabled webhook (its failure streak cleared). */
export class PatchWebhookDto {
  @IsOptional() @IsString() @MaxLength(2000) url?: string;
  @IsOptional() @EventTypes() event_types?: string[];
  @IsOptional() @IsString() @MaxLength(500) description?: string;
  @IsOptional() @IsBoolean() enabled?: boolean;
}

export class ListWebhooksQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
}

@ApiSchema({ name: 'Webhook' })
export class WebhookResponseDto {
  id!: string;
  url!: string;
  event_types!: string[];
  description!: string;
  @ApiProperty({ enum: ['enabled', 'disabled'] })
  status!: WebhookStatus;
  /** Why it was disabled (failed deliveries in a row, or the API). */
  disabled_reason!: string | null;
  /** Failed deliveries in a row (GATEWAY_WEBHOOK_DISABLE_AFTER disables it). */
  failure_streak!: number;
  created_by!: string;
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'WebhookCreated' })
export class WebhookCreatedDto extends WebhookResponseDto {
  /** The signing secret (Standard Webhooks `whsec_…`), shown only in this answer. */
  secret!: string;
}

@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryResponseDto {
  /** The `webhook-id` header of every attempt (receivers deduplicate by it). */
  id!: string;
  webhook_id!: string;
  event_id!: string;
  event_type!: string;
  /** The event's public feed position. */
  feed_cursor!: number;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] })
  status!: DeliveryStatus;
  attempts!: number;
  /** When a pending delivery is tried next. */
  next_attempt_at!: string | null;
  last_status_code!: number | null;
  last_error!: string | null;
  /** The start of the receiver's last answer (1 KB). */
  last_response!: string | null;
  created_at!: string;
  delivered_at!: string | null;
}

@ApiSchema({ name: 'WebhookDeleted' })
export class WebhookDeletedDto {
  id!: string;
  deleted!: boolean;
}

export const toWebhookResponse = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  event_types: w.event_types,
  description: w.description,
  status: w.status,
  disabled_reason: w.disabled_reason,
  failure_streak: w.failure_streak,
  created_by: w.created_by,
  created_at: w.created_at.toISOString(),
  updated_at: w.updated_at.toISOString(),
});

export const toDeliveryResponse = (d: DeliveryRow) => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event_id: d.event_id,
  event_type: d.event_type,
  feed_cursor: Number(d.feed_cursor),
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.status === 'pending' ? d.next_attempt_at.toISOString() : null,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  last_response: d.last_response,
  created_at: d.created_at.toISOString(),
  delivered_at: d.delivered_at ? d.delivered_at.toISOString() : null,
});

type _WebhookDocumented = Assert<Documents<WebhookResponseDto, ReturnType<typeof toWebhookResponse>>>;
type _DeliveryDocumented = Assert<Documents<WebhookDeliveryResponseDto, ReturnType<typeof toDeliveryResponse>>>;
