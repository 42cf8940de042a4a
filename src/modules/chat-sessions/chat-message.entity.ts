import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ChatMessageJson, MessageKind, MessageStatus } from './chat-message';

/** One message of a session's tree (docs/api.md §1 `chat_session_messages` + docs/api.md §3 `parent_id`). */
@Entity({ name: 'chat_session_messages' })
export class ChatMessageEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'session_id' }) sessionId!: string;
  @Column('integer') sequence!: number;
  @Column('text', { name: 'parent_id', nullable: true }) parentId!: string | null;
  /** Replayable messages (status other than failed) from the root up to and including this one. */
  @Column('integer', { name: 'replay_count' }) replayCount!: number;
  /** JSON size of those messages (the context-size estimate for compaction). */
  @Column('bigint', { name: 'replay_chars' }) replayChars!: number;
  @Column('text') role!: string;
  @Column('text') status!: MessageStatus;
  @Column('text') kind!: MessageKind;
  @Column('text', { name: 'produced_by_call_id', nullable: true }) producedByCallId!: string | null;
  @Column('jsonb', { name: 'message_json' }) messageJson!: ChatMessageJson;
  @Column('jsonb', { name: 'error_json', nullable: true }) errorJson!: Record<string, unknown> | null;
  @Column('text', { name: 'client_request_id', nullable: true }) clientRequestId!: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
