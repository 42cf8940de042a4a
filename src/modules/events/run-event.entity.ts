import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One persisted event (envelope v1). `sequence` is per run; `feedCursor` is the public-feed position. */
@Entity({ name: 'task_run_events' })
export class RunEventEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'run_id' }) runId!: string;
  @Column('text', { name: 'task_id', nullable: true }) taskId!: string | null;
  @Column('text', { name: 'session_id', nullable: true }) sessionId!: string | null;
  @Column('bigint') sequence!: number;
  @Column('text') type!: string;
  @Column('jsonb') data!: Record<string, unknown>;
  @Column('timestamptz', { name: 'occurred_at' }) occurredAt!: Date;
  @Column('bigint', { name: 'feed_cursor', nullable: true }) feedCursor!: number | null;
  @Column('text', { name: 'request_id', nullable: true }) requestId!: string | null;
  @Column('text', { name: 'trace_id', nullable: true }) traceId!: string | null;
}
