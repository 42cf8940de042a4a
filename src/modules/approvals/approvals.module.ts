import { Module } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { ApprovalsService } from './approvals.service';
import { TaskApprovalEntity } from './task-approval.entity';
import { TaskApprovalRepository } from './task-approval.repository';

/** Approval gates and policies; the task runtime (and later Agent Chat) use ApprovalsService. */
@Module({
  imports: [DatabaseModule.forFeature([TaskApprovalEntity])],
  providers: [TaskApprovalRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
