import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RetentionPruner } from '@modules/retention';
import { SchedulesRepository } from './schedules.repository';

/** Schedule firings that ended, under retention (GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_AGE / _MAX_COUNT). */
@Injectable()
export class SchedulesRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly schedules: SchedulesRepository,
  ) {}

  @RetentionPruner('schedule_firings')
  async prune() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.scheduleFirings;
    return { deleted: await this.schedules.prune(new Date(Date.now() - maxAgeMs), maxCount), max_age_ms: maxAgeMs, max_count: maxCount };
  }
}
