import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Artifact kinds of the runtime API (docs/api.md §4.3); agent_loop adds agent_conversation and summary. */
export type ArtifactKind = 'stdout' | 'stderr' | 'patch' | 'summary' | 'agent_conversation' | 'git_summary' | string;
export type PatchStatus = 'applied' | 'proposed' | 'reverted';

/** What a patch artifact captured (metadata of kind=patch). */
export interface PatchMetadata {
  path: string;
  operation: 'write' | 'append' | 'delete' | 'edit';
  before_existed: boolean;
  before_content: string;
  after_exists: boolean;
  after_content: string;
}

@Entity({ name: 'task_artifacts' })
export class TaskArtifactEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'task_id' }) taskId!: string;
  @Column('text', { name: 'run_id' }) runId!: string;
  @Column('text', { name: 'step_id', nullable: true }) stepId!: string | null;
  @Column('text') kind!: ArtifactKind;
  @Column('text') name!: string;
  @Column('text') description!: string;
  @Column('text', { name: 'mime_type' }) mimeType!: string;
  @Column('text') path!: string;
  @Column('text', { name: 'content_text' }) contentText!: string;
  @Column('bigint', { name: 'size_bytes' }) sizeBytes!: number;
  @Column('text') sha256!: string;
  @Column('boolean') truncated!: boolean;
  @Column('text') status!: string;
  @Column('jsonb') metadata!: Record<string, unknown>;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
