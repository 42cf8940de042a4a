import { Module } from '@nestjs/common';
import { BudgetsModule } from '@modules/budgets';
import { ProvidersModule } from '@modules/providers';
import { DatabaseModule } from '@core/database/database.module';
import { InferenceEngineService } from './inference-engine.service';
import { InferenceService } from './inference.service';
import { RequestRecorders } from './request-recorder';
import { RoutePlanningService } from './route-planning.service';
import { TraceStoreService } from './usage/trace-store.service';
import { UsageEventEntity } from './usage/usage-event.entity';
import { UsageLedgerService } from './usage/usage-ledger.service';
import { UsageRepository } from './usage/usage.repository';

/**
 * The one model-calling service (docs/design.md §5, §11.1): routing, retries, failover, cost, the usage ledger (batched, off the
 * request path), route traces, live tee; every attempt passes the spend budgets (BudgetGuard).
 */
@Module({
  imports: [ProvidersModule, BudgetsModule, DatabaseModule.forFeature([UsageEventEntity])],
  providers: [RoutePlanningService, RequestRecorders, InferenceEngineService, InferenceService, UsageRepository, UsageLedgerService, TraceStoreService],
  exports: [InferenceService, InferenceEngineService, RoutePlanningService, UsageLedgerService, TraceStoreService],
})
export class InferenceModule {}
