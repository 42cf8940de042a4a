import { Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PeriodicPass } from '@core/async/periodic-pass';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { EventsModule } from '@modules/events';
import { BudgetBook } from './budget-book.service';
import { BudgetGuard } from './budget-guard.service';
import { BudgetsRepository } from './budgets.repository';
import { BudgetsService } from './budgets.service';

/** Budgets: the guard every model attempt passes (both roles call models) and the API's service. */
@Module({
  imports: [EventsModule],
  providers: [BudgetsRepository, BudgetBook, BudgetsService, BudgetGuard],
  exports: [BudgetsService, BudgetGuard],
})
export class BudgetsModule {}

const SWEEP_BATCH = 1000;

/** Gives back reservations whose process died before settling them (they expire after GATEWAY_BUDGET_RESERVATION_TTL). */
@Injectable()
export class BudgetReservationSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pass = new PeriodicPass('budget reservation sweep', async () => {
    const n = await this.repo.sweep(SWEEP_BATCH);
    if (n > 0) rootLogger().info({ reservations: n }, 'gave back budget reservations whose calls never settled');
  });

  constructor(
    private readonly repo: BudgetsRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.pass.start(this.config.gateway.budgets.sweepIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pass.stop();
  }
}

/** The sweep: worker role only, like the other background passes. */
@Module({
  providers: [BudgetsRepository, BudgetReservationSweeper],
})
export class BudgetsWorkerModule {}
