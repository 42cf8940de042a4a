import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RetentionPruner } from '@modules/retention';
import { WebhooksRepository } from './webhooks.repository';

/** Webhook deliveries that ended, under retention (GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_AGE / _MAX_COUNT). */
@Injectable()
export class WebhooksRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly webhooks: WebhooksRepository,
  ) {}

  @RetentionPruner('webhook_deliveries')
  async prune() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.webhookDeliveries;
    return { deleted: await this.webhooks.prune(new Date(Date.now() - maxAgeMs), maxCount), max_age_ms: maxAgeMs, max_count: maxCount };
  }
}
