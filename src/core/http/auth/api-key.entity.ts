import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text') name!: string;
  @Column('text') prefix!: string;
  @Column('bytea', { name: 'secret_hash' }) secretHash!: Buffer;
  @Column('text', { array: true }) scopes!: string[];
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'last_used_at', nullable: true }) lastUsedAt!: Date | null;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  /** A key minted for one External Agent session's adapter (its usage is the session's). */
  @Column('text', { name: 'agent_chat_session_id', nullable: true }) agentChatSessionId?: string | null;
}
