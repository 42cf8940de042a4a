import { Module } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { RetentionRunEntity } from './retention-run.entity';
import { RetentionRunRepository } from './retention-run.repository';
import { RetentionPruners } from './retention-pruners';
import { RetentionService } from './retention.service';

/**
 * Retention for both roles: the sweep (on GATEWAY_RETENTION_INTERVAL when enabled, or on demand), its history in
 * `retention_runs`, and the pruners every module declares on its own tables with @RetentionPruner.
 */
@Module({
  imports: [DatabaseModule.forFeature([RetentionRunEntity])],
  providers: [RetentionRunRepository, RetentionPruners, RetentionService],
  exports: [RetentionService],
})
export class RetentionModule {}
