import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An in-flight generation (or compaction, leaf_key `*`): the branch lock, and who to ask to stop it.
 * Held under the one lease primitive (core/lease): the owner extends `lease_expires_at`; an expired lease
 * (GATEWAY_CHAT_GENERATION_STALE_AFTER without a heartbeat) frees the leaf.
 */
@Entity({ name: 'chat_session_generations' })
export class ChatGenerationEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'session_id' }) sessionId!: string;
  @Column('text', { name: 'leaf_key' }) leafKey!: string;
  @Column('text', { name: 'message_id', nullable: true }) messageId!: string | null;
  @Column('text') kind!: string;
  @Column('text', { name: 'previous_status', nullable: true }) previousStatus!: string | null;
  @Column('text') owner!: string;
  @Column('timestamptz', { name: 'started_at' }) startedAt!: Date;
  @Column('text', { name: 'lease_token' }) leaseToken!: string;
  @Column('timestamptz', { name: 'lease_expires_at' }) leaseExpiresAt!: Date;
}
