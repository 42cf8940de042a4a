import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'retention_runs' })
export class RetentionRunEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') trigger!: 'scheduled' | 'manual';
  @Column('text') status!: 'running' | 'completed' | 'failed';
  @Column('jsonb') results!: Record<string, unknown>;
  @Column('text') error!: string;
  @Column('timestamptz', { name: 'started_at' }) startedAt!: Date;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt!: Date | null;
}
