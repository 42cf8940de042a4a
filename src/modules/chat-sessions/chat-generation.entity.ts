import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An in-flight generation (or compaction, leaf_key `*`): the branch lock, and who to ask to stop it.
 * The owner refreshes `heartbeat_at`; a row not refreshed for GATEWAY_CHAT_GENERATION_STALE_AFTER is dead.
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
  @Column('timestamptz', { name: 'heartbeat_at' }) heartbeatAt!: Date;
}
