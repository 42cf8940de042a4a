import { Column, Entity, PrimaryColumn } from 'typeorm';

export type StepStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/**
 * One unit of work of a run. A step is written `running` before its side effect starts (the durable
 * dispatch record, docs/design.md §4.5) and gets its result after; a `running` step found by a later attempt is
 * ambiguous unless `idempotent`.
 */
@Entity({ name: 'task_steps' })
export class TaskStepEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'task_id' }) taskId!: string;
  @Column('text', { name: 'run_id' }) runId!: string;
  @Column('integer', { name: 'step_index' }) index!: number;
  @Column('text') kind!: string;
  @Column('text') title!: string;
  @Column('text') status!: StepStatus;
  @Column('text') phase!: string;
  @Column('text') result!: string;
  @Column('text', { name: 'tool_name' }) toolName!: string;
  @Column('boolean') idempotent!: boolean;
  @Column('jsonb') input!: Record<string, unknown>;
  @Column('jsonb', { name: 'output_summary' }) outputSummary!: Record<string, unknown>;
  @Column('integer', { name: 'exit_code', nullable: true }) exitCode!: number | null;
  @Column('text') error!: string;
  @Column('text', { name: 'error_kind' }) errorKind!: string;
  @Column('text', { name: 'approval_id', nullable: true }) approvalId!: string | null;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt!: Date | null;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt!: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
