import { Module } from '@nestjs/common';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalsService } from './approvals.service';
import { GrantsRepository } from './grants.repository';
import { TurnApprovalsService } from './turn-approvals.service';

/**
 * Every approval gate, grant and decision, whatever runtime asked: a task run's gates (ApprovalsService) and an
 * External Agent turn's permission requests (TurnApprovalsService), in one store with one settlement. Each service's
 * `countPending` is the pending-approvals gauge of its kind (@PendingApprovalsGauge).
 */
@Module({
  providers: [ApprovalsRepository, GrantsRepository, ApprovalsService, TurnApprovalsService],
  exports: [ApprovalsService, TurnApprovalsService],
})
export class ApprovalsModule {}
