import { Module, OnModuleInit } from '@nestjs/common';
import { MetricsService } from '@core/metrics/metrics.service';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalsService } from './approvals.service';
import { GrantsRepository } from './grants.repository';
import { TurnApprovalsService } from './turn-approvals.service';

/**
 * Every approval gate, grant and decision, whatever runtime asked: a task run's gates (ApprovalsService) and an
 * External Agent turn's permission requests (TurnApprovalsService), in one store with one settlement.
 */
@Module({
  providers: [ApprovalsRepository, GrantsRepository, ApprovalsService, TurnApprovalsService],
  exports: [ApprovalsService, TurnApprovalsService],
})
export class ApprovalsModule implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly approvals: ApprovalsService,
    private readonly turns: TurnApprovalsService,
  ) {}

  onModuleInit(): void {
    this.metrics.countPendingApprovals('task', () => this.approvals.countPending());
    this.metrics.countPendingApprovals('agent_chat', () => this.turns.countPending());
  }
}
