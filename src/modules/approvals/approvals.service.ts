import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '@core/config/app-config';
import type { ApprovalPolicyName } from '@core/config/groups/tasks.env';
import { MetricsService } from '@core/metrics/metrics.service';
import { PreExecutionGate, preExecutionGate, toolRequiresApproval } from './approval-policies';
import { ApprovalNotFoundError, ApprovalNotPendingError } from './approvals.errors';
import { ApprovalKind, ApprovalStatus, TaskApprovalEntity } from './task-approval.entity';

/** An approval row as other modules see it (they never import the entity). */
/** An approval as other modules see it: a plain record, not the entity (STYLE rule 14). */
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
export type { ApprovalKind, ApprovalStatus } from './task-approval.entity';
import { TaskApprovalRepository } from './task-approval.repository';

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
 * Approval gates: policies (GATEWAY_TASK_APPROVAL_POLICIES) and the task_approval rows. Writes take the
 * caller's EntityManager so the gate, the run transition and their events commit together.
 */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly approvals: TaskApprovalRepository,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  get activePolicies(): readonly ApprovalPolicyName[] {
    return this.config.tasks.approvalPolicies;
  }

  preExecutionGate(executionKind: string, sandboxNetwork: boolean): PreExecutionGate | null {
    return preExecutionGate(this.activePolicies, executionKind, sandboxNetwork);
  }

  /** `policies`: a saved agent's own (issue 27); absent: GATEWAY_TASK_APPROVAL_POLICIES. */
  toolRequiresApproval(toolName: string, policies?: readonly string[] | null): boolean {
    return toolRequiresApproval((policies as readonly ApprovalPolicyName[] | null | undefined) ?? this.activePolicies, toolName);
  }

  async create(manager: EntityManager, input: NewApproval): Promise<ApprovalRecord> {
    let summary = input.actionSummary.slice(0, MAX_SUMMARY_LINES);
    while (summary.length > 1 && Buffer.byteLength(summary.join('\n')) > MAX_SUMMARY_BYTES) summary = summary.slice(0, -1);
    const row: TaskApprovalEntity = {
      id: `approval_${randomBytes(12).toString('hex')}`,
      tenantId: input.tenantId,
      taskId: input.taskId,
      runId: input.runId,
      stepId: input.stepId ?? null,
      kind: input.kind,
      status: 'pending',
      reason: input.reason,
      actionSummary: summary.map((l) => (Buffer.byteLength(l) > MAX_SUMMARY_BYTES ? `${l.slice(0, 1024)}…` : l)),
      details: input.details,
      actionHash: planHash(input.identity ?? input.details),
      requestedBy: input.requestedBy,
      resolvedBy: '',
      resolutionNote: '',
      createdAt: new Date(),
      resolvedAt: null,
    };
    await this.approvals.insert(manager, row);
    return row;
  }

  listForTask(tenantId: string, taskId: string): Promise<ApprovalRecord[]> {
    return this.approvals.listForTask(tenantId, taskId);
  }

  /** The tenant's approvals still waiting for a decision, across its tasks, oldest first. */
  listPending(tenantId: string, limit: number): Promise<ApprovalRecord[]> {
    return this.approvals.listPending(tenantId, limit);
  }

  listForRun(tenantId: string, runId: string, manager?: EntityManager): Promise<ApprovalRecord[]> {
    return this.approvals.listForRun(tenantId, runId, manager);
  }

  async get(tenantId: string, taskId: string, id: string, manager?: EntityManager): Promise<ApprovalRecord> {
    const row = await this.approvals.find(tenantId, taskId, id, manager);
    if (!row) throw new ApprovalNotFoundError(id);
    return row;
  }

  /** pending → approved | rejected; 409 when it is no longer pending (e.g. the run was cancelled). */
  async resolve(
    manager: EntityManager,
    q: { tenantId: string; taskId: string; id: string; decision: 'approve' | 'reject'; note: string; resolvedBy: string },
  ): Promise<ApprovalRecord> {
    const current = await this.get(q.tenantId, q.taskId, q.id, manager);
    const updated = await this.approvals.decide(manager, {
      tenantId: q.tenantId,
      id: q.id,
      status: q.decision === 'approve' ? 'approved' : 'rejected',
      resolvedBy: q.resolvedBy,
      note: q.note,
    });
    if (!updated) {
      const now = await this.get(q.tenantId, q.taskId, q.id, manager);
      throw new ApprovalNotPendingError(q.id, now.status ?? current.status);
    }
    // Recorded as the decision is written (the caller's transaction rarely rolls back after it).
    this.metrics.approvalResolved('task', updated.status === 'approved' ? 'approved' : 'denied', updated.createdAt, updated.resolvedAt);
    return updated;
  }

  async cancelPendingForRun(manager: EntityManager, tenantId: string, runId: string, note: string): Promise<ApprovalRecord[]> {
    const cancelled = await this.approvals.cancelPendingForRun(manager, tenantId, runId, note);
    for (const a of cancelled) this.metrics.approvalResolved('task', 'cancelled', a.createdAt, a.resolvedAt);
    return cancelled;
  }

  deleteForTask(manager: EntityManager, tenantId: string, taskId: string): Promise<void> {
    return this.approvals.deleteForTask(manager, tenantId, taskId);
  }

  countPending(): Promise<number> {
    return this.approvals.countPending();
  }
}
