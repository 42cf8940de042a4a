import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One conversation (docs/api.md §1), a node of a compression lineage (docs/api.md §2). */
@Entity({ name: 'chat_sessions' })
export class ChatSessionEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') title!: string;
  @Column('text', { name: 'system_prompt' }) systemPrompt!: string;
  @Column('text', { name: 'user_name' }) userName!: string;
  @Column('text', { name: 'active_leaf_id', nullable: true }) activeLeafId!: string | null;
  /** Next message sequence; bumped in the transaction that inserts the messages. */
  @Column('integer', { name: 'next_sequence' }) nextSequence!: number;
  @Column('integer', { name: 'message_count' }) messageCount!: number;
  @Column('integer', { name: 'provider_call_count' }) providerCallCount!: number;
  @Column('text', { name: 'last_model', nullable: true }) lastModel!: string | null;
  @Column('text', { name: 'last_provider', nullable: true }) lastProvider!: string | null;
  @Column('bigint', { name: 'last_cost_micros_usd', nullable: true }) lastCostMicrosUsd!: number | null;
  @Column('text', { name: 'last_request_id', nullable: true }) lastRequestId!: string | null;
  @Column('text', { name: 'parent_session_id', nullable: true }) parentSessionId!: string | null;
  @Column('text', { name: 'lineage_root_id' }) lineageRootId!: string;
  @Column('text', { name: 'lineage_tip_id' }) lineageTipId!: string;
  @Column('integer', { name: 'compression_segment_count' }) compressionSegmentCount!: number;
  @Column('text', { name: 'continuation_session_id', nullable: true }) continuationSessionId!: string | null;
  @Column('boolean', { name: 'pre_compression_snapshot' }) preCompressionSnapshot!: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
