import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RetentionPruner } from '@modules/retention';
import { ResponsesRepository } from './responses.repository';

/** Stored /v1/responses responses under retention (GATEWAY_RETENTION_RESPONSES_MAX_AGE / _MAX_COUNT). */
@Injectable()
export class ResponsesRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly responses: ResponsesRepository,
  ) {}

  @RetentionPruner('responses')
  async prune() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.responses;
    return { responses: await this.responses.prune(new Date(Date.now() - maxAgeMs), maxCount), max_age_ms: maxAgeMs, max_count: maxCount };
  }
}
