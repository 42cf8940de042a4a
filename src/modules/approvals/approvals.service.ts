import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '@core/config/app-config';
import type { ApprovalPolicyName } from '@core/config/groups/tasks.env';
import { PendingApprovalsGauge } from '@core/health/system-info.decorator';
import { PreExecutionGate, preExecutionGate, toolRequiresApproval } from './approval-policies';
import type { ApprovalKind, TaskApprovalRow, TaskApprovalStatus as ApprovalStatus } from './approval-rows';
import { ApprovalNotFoundError, ApprovalNotPendingError } from './approvals.errors';
import { ApprovalsRepository } from './approvals.repository';

/** A task run's approval as other modules see it: a plain record, not the stored row. */
export interface ApprovalRecord {
  id: string;
  tenantId: string;
  taskId: string;
  runId: string;
  stepId: string | null;
  kind: ApprovalKind;
  status: ApprovalStatus;
  reason: string;
  actionSummary: string[];
  details: Record<string, unknown>;
  actionHash: string;
  requestedBy: string;
  resolvedBy: string;
  resolutionNote: string;
  createdAt: Date;
  resolvedAt: Date | null;
}
export type { ApprovalKind, TaskApprovalStatus as ApprovalStatus } from './approval-rows';

const toRecord = (a: TaskApprovalRow): ApprovalRecord => ({
  id: a.id,
  tenantId: a.tenant_id,
  taskId: a.task_id,
  runId: a.run_id,
  stepId: a.step_id,
  kind: a.kind,
  status: a.status,
  reason: a.reason,
  actionSummary: a.action_summary,
  details: a.details,
  actionHash: a.action_hash,
  requestedBy: a.requested_by,
  resolvedBy: a.resolved_by,
  resolutionNote: a.note,
  createdAt: a.created_at,
  resolvedAt: a.resolved_at,
});

export interface NewApproval {
  tenantId: string;
  taskId: string;
  runId: string;
  stepId?: string | null;
  kind: ApprovalKind;
  reason: string;
  actionSummary: string[];
  details: Record<string, unknown>;
  /** The part of the plan the approval binds (hashed into action_hash); defaults to `details`. */
  identity?: Record<string, unknown>;
  requestedBy: string;
}

const MAX_SUMMARY_LINES = 16;
const MAX_SUMMARY_BYTES = 4096;

/** Stable hash of an approved plan (key order independent). */
export function planHash(details: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v as object)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(details)))
    .digest('hex');
}

/**
 * A task run's approval gates: policies (GATEWAY_TASK_APPROVAL_POLICIES) and its rows of the approvals store
 * (`runtime = task_run`). Writes take the caller's EntityManager so the gate, the run transition and their events commit
 * together; a decision is the store's one settlement (ApprovalsRepository.settle), and the waiting run is requeued by
 * the caller in the same transaction.
 */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly approvals: ApprovalsRepository,
    private readonly config: AppConfig,
  ) {}

  get activePolicies(): readonly ApprovalPolicyName[] {
    return this.config.tasks.approvalPolicies;
  }

  preExecutionGate(executionKind: string, sandboxNetwork: boolean): PreExecutionGate | null {
    return preExecutionGate(this.activePolicies, executionKind, sandboxNetwork);
  }

  /** `policies`: a saved agent's own (docs/agents.md); absent: GATEWAY_TASK_APPROVAL_POLICIES. */
  toolRequiresApproval(toolName: string, policies?: readonly string[] | null): boolean {
    return toolRequiresApproval((policies as readonly ApprovalPolicyName[] | null | undefined) ?? this.activePolicies, toolName);
  }

  async create(manager: EntityManager, input: NewApproval): Promise<ApprovalRecord> {
    let summary = input.actionSummary.slice(0, MAX_SUMMARY_LINES);
    while (summary.length > 1 && Buffer.byteLength(summary.join('\n')) > MAX_SUMMARY_BYTES) summary = summary.slice(0, -1);
    const row = await this.approvals.insertTask(manager, {
      id: `approval_${randomBytes(12).toString('hex')}`,
      tenant_id: input.tenantId,
      task_id: input.taskId,
      run_id: input.runId,
      step_id: input.stepId ?? null,
      kind: input.kind,
      status: 'pending',
      reason: input.reason,
      action_summary: summary.map((l) => (Buffer.byteLength(l) > MAX_SUMMARY_BYTES ? `${l.slice(0, 1024)}…` : l)),
      details: input.details,
      action_hash: planHash(input.identity ?? input.details),
      requested_by: input.requestedBy,
      resolved_by: '',
      note: '',
      created_at: new Date(),
      resolved_at: null,
    });
    return toRecord(row);
  }

  async listForTask(tenantId: string, taskId: string): Promise<ApprovalRecord[]> {
    return (await this.approvals.listForTask(tenantId, taskId)).map(toRecord);
  }

  /** The tenant's approvals still waiting for a decision, across its tasks, oldest first. */
  async listPending(tenantId: string, limit: number): Promise<ApprovalRecord[]> {
    return (await this.approvals.listPending('task_run', tenantId, limit)).map(toRecord);
  }

  async listForRun(tenantId: string, runId: string, manager?: EntityManager): Promise<ApprovalRecord[]> {
    return (await this.approvals.listForRun(tenantId, runId, manager)).map(toRecord);
  }

  async get(tenantId: string, taskId: string, id: string, manager?: EntityManager): Promise<ApprovalRecord> {
    const row = await this.approvals.findForTask(tenantId, taskId, id, manager);
    if (!row) throw new ApprovalNotFoundError(id);
    return toRecord(row);
  }

  /** pending → approved | rejected; 409 when it is no longer pending (e.g. the run was cancelled). */
  async resolve(
    manager: EntityManager,
    q: { tenantId: string; taskId: string; id: string; decision: 'approve' | 'reject'; note: string; resolvedBy: string },
  ): Promise<ApprovalRecord> {
    const current = await this.get(q.tenantId, q.taskId, q.id, manager);
    const [updated] = await this.approvals.settle(
      manager,
      { ids: [q.id], tenantId: q.tenantId },
      { status: q.decision === 'approve' ? 'approved' : 'rejected', resolved_by: q.resolvedBy, note: q.note },
    );
    if (!updated) {
      const now = await this.get(q.tenantId, q.taskId, q.id, manager);
      throw new ApprovalNotPendingError(q.id, now.status ?? current.status);
    }
    return toRecord(updated as TaskApprovalRow);
  }

  async cancelPendingForRun(manager: EntityManager, tenantId: string, runId: string, note: string): Promise<ApprovalRecord[]> {
    const cancelled = await this.approvals.settle(manager, { runId, tenantId }, { status: 'cancelled', resolved_by: 'system', note });
    return (cancelled as TaskApprovalRow[]).map(toRecord);
  }

  deleteForTask(manager: EntityManager, tenantId: string, taskId: string): Promise<void> {
    return this.approvals.deleteForTask(manager, tenantId, taskId);
  }

  @PendingApprovalsGauge('task')
  countPending(): Promise<number> {
    return this.approvals.countPending('task_run');
  }
}
