/** The approvals module's public face: other modules and the composition root import `@modules/approvals`, never its files. */
export { ApprovalsModule } from './approvals.module';
export { ApprovalsService, planHash } from './approvals.service';
export type { ApprovalKind, ApprovalRecord } from './approvals.service';
export { TurnApprovalsService } from './turn-approvals.service';
export type { ApprovalMode, OperatorChoice } from './turn-approvals.service';
export type { GrantRow, TurnApprovalRow } from './approval-rows';
export type { NewTurnApproval } from './approvals.repository';
export {
  APPROVAL_STATUSES,
  GRANT_SCOPES,
  SCOPE_CHOICES,
  TOOL_KINDS,
  optionFor,
  taskDispositionOf,
  taskToolOf,
  toolKindOf,
  type ApprovalPath,
  type ApprovalScope,
  type ApprovalStatus as TurnApprovalStatus,
  type Decision,
  type PermissionOption,
  type ToolKind,
} from './approval-vocabulary';
export { ResolveApprovalDto, TaskApprovalResponseDto, toApprovalResponse } from './task-approval.dto';
export type { ApprovalResponse } from './task-approval.dto';
