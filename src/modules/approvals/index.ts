/** The approvals module's public face: other modules and the composition root import `@modules/approvals`, never its files. */
export { ApprovalsModule } from './approvals.module';
export { ApprovalsService, planHash } from './approvals.service';
export type { ApprovalKind, ApprovalRecord } from './approvals.service';
export { ResolveApprovalDto, TaskApprovalResponseDto, toApprovalResponse } from './task-approval.dto';
export type { ApprovalResponse } from './task-approval.dto';
