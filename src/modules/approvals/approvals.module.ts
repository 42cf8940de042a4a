import { Module, OnModuleInit } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { MetricsService } from '@core/metrics/metrics.service';
import { ApprovalsService } from './approvals.service';
import { TaskApprovalEntity } from './task-approval.entity';
import { TaskApprovalRepository } from './task-approval.repository';

/** Approval gates and policies; the task runtime (and later Agent Chat) use ApprovalsService. */
@Module({
  imports: [DatabaseModule.forFeature([TaskApprovalEntity])],
  providers: [TaskApprovalRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly approvals: ApprovalsService,
  ) {}

  onModuleInit(): void {
    this.metrics.countPendingApprovals('task', () => this.approvals.countPending());
  }
}
