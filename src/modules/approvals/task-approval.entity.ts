import { Column, Entity, PrimaryColumn } from 'typeorm';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';
/** Seed 003 "Approval kinds". */
export type ApprovalKind = 'shell_command' | 'git_exec' | 'file_write' | 'network_egress' | 'agent_loop_tool_call';

@Entity({ name: 'task_approvals' })
export class TaskApprovalEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'task_id' }) taskId!: string;
  @Column('text', { name: 'run_id' }) runId!: string;
  @Column('text', { name: 'step_id', nullable: true }) stepId!: string | null;
  @Column('text') kind!: ApprovalKind;
  @Column('text') status!: ApprovalStatus;
  @Column('text') reason!: string;
  /** What will run, for the reviewer: ≤16 lines (argv, cwd, env keys, sandbox). */
  @Column('jsonb', { name: 'action_summary' }) actionSummary!: string[];
  /** The exact plan (argv, cwd, env_keys, …) the gate approves. */
  @Column('jsonb') details!: Record<string, unknown>;
  /** SHA-256 of `details`; the worker refuses to run a plan that differs from the approved one. */
  @Column('text', { name: 'action_hash' }) actionHash!: string;
  @Column('text', { name: 'requested_by' }) requestedBy!: string;
  @Column('text', { name: 'resolved_by' }) resolvedBy!: string;
  @Column('text', { name: 'resolution_note' }) resolutionNote!: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'resolved_at', nullable: true }) resolvedAt!: Date | null;
}
