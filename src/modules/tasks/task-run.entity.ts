import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunStatus } from './run-status';

/** Resume context carried by a run created with `resume` (docs/api.md §4 "Resume semantics"). */
export interface RunCheckpoint {
  source_run_id: string;
  last_completed_step_id: string | null;
  last_completed_step_index: number | null;
  last_event_sequence: number;
  reason: string;
  /** Trigger-specific input (e.g. a continue prompt or a retry-from-turn index), for the executor. */
  input?: Record<string, unknown>;
}

@Entity({ name: 'task_runs' })
export class TaskRunEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'task_id' }) taskId!: string;
  @Column('integer') number!: number;
  @Column('text') status!: RunStatus;
  @Column('text', { name: 'execution_kind' }) executionKind!: string;
  @Column('text', { name: 'workspace_mode' }) workspaceMode!: string;
  @Column('text', { name: 'workspace_path' }) workspacePath!: string;
  @Column('text') model!: string;
  @Column('text') provider!: string;
  @Column('text', { name: 'provider_kind' }) providerKind!: string;
  @Column('bigint', { name: 'total_cost_micros_usd' }) totalCostMicrosUsd!: number;
  @Column('bigint', { name: 'prior_cost_micros_usd' }) priorCostMicrosUsd!: number;
  @Column('text', { name: 'last_error' }) lastError!: string;
  @Column('text', { name: 'error_kind' }) errorKind!: string;
  @Column('text', { name: 'resumed_from_run_id', nullable: true }) resumedFromRunId!: string | null;
  @Column('text', { name: 'resume_reason' }) resumeReason!: string;
  @Column('jsonb', { nullable: true }) checkpoint!: RunCheckpoint | null;
  @Column('integer') attempts!: number;
  @Column('text', { name: 'lease_owner', nullable: true }) leaseOwner!: string | null;
  @Column('uuid', { name: 'lease_token', nullable: true }) leaseToken!: string | null;
  @Column('timestamptz', { name: 'lease_expires_at', nullable: true }) leaseExpiresAt!: Date | null;
  @Column('text', { name: 'request_id', nullable: true }) requestId!: string | null;
  @Column('text', { name: 'trace_id', nullable: true }) traceId!: string | null;
  @Column('timestamptz', { name: 'queued_at', nullable: true }) queuedAt!: Date | null;
  @Column('timestamptz', { name: 'enqueued_at', nullable: true }) enqueuedAt!: Date | null;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt!: Date | null;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt!: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
