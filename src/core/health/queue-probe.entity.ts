import { Column, Entity, PrimaryColumn } from 'typeorm';

export type QueueProbeStatus = 'queued' | 'running' | 'completed';

@Entity({ name: 'system_queue_probes' })
export class QueueProbeEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') status!: QueueProbeStatus;
  @Column('integer', { name: 'sleep_ms' }) sleepMs!: number;
  @Column('integer') attempts!: number;
  @Column('text', { nullable: true }) worker!: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt!: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt!: Date | null;
}
