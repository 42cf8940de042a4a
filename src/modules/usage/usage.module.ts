import { Module } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { TraceStoreService } from './trace-store.service';
import { UsageEventEntity } from './usage-event.entity';
import { UsageLedgerService } from './usage-ledger.service';
import { UsageRepository } from './usage.repository';

/** Usage ledger (batched, off the request path) and recent request traces. */
@Module({
  imports: [DatabaseModule.forFeature([UsageEventEntity])],
  providers: [UsageRepository, UsageLedgerService, TraceStoreService],
  exports: [UsageLedgerService, TraceStoreService],
})
export class UsageModule {}
