import { ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import type { ApprovalKind, ApprovalRecord, ApprovalStatus } from './approvals.service';

/** `POST /hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve`. */
export class ResolveApprovalDto {
  @IsIn(['approve', 'reject']) decision!: 'approve' | 'reject';
  @IsOptional() @IsString() @MaxLength(4000) note?: string;
}

/** A task approval: the exact action it gates (argv, cwd, env keys, or the tool call) and its decision. */
@ApiSchema({ name: 'TaskApproval' })
export class TaskApprovalResponseDto {
  id!: string;
  task_id!: string;
  run_id!: string;
  step_id?: string;
  kind!: ApprovalKind;
  status!: ApprovalStatus;
  reason!: string;
  action_summary!: string[];
  details!: Record<string, unknown>;
  requested_by?: string;
  resolved_by?: string;
  resolution_note?: string;
  created_at!: string;
  resolved_at?: string;
}

export const toApprovalResponse = (a: ApprovalRecord) => ({
  id: a.id,
  task_id: a.taskId,
  run_id: a.runId,
  step_id: a.stepId ?? undefined,
  kind: a.kind,
  status: a.status,
  reason: a.reason,
  action_summary: a.actionSummary,
  details: a.details,
  requested_by: a.requestedBy || undefined,
  resolved_by: a.resolvedBy || undefined,
  resolution_note: a.resolutionNote || undefined,
  created_at: a.createdAt.toISOString(),
  resolved_at: a.resolvedAt ? a.resolvedAt.toISOString() : undefined,
});

export type ApprovalResponse = ReturnType<typeof toApprovalResponse>;

type _ApprovalDocumented = Assert<Documents<TaskApprovalResponseDto, ApprovalResponse>>;
