import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One upstream call made for a session (docs/api.md §1 provider-calls stream). */
@Entity({ name: 'chat_session_provider_calls' })
export class ChatProviderCallEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'session_id' }) sessionId!: string;
  @Column('text', { name: 'request_id' }) requestId!: string;
  @Column('text') provider!: string;
  @Column('text', { name: 'provider_kind' }) providerKind!: string;
  @Column('text') model!: string;
  @Column('text', { name: 'requested_model', nullable: true }) requestedModel!: string | null;
  @Column('text', { name: 'route_reason', nullable: true }) routeReason!: string | null;
  @Column('text') status!: string;
  @Column('bigint', { name: 'cost_micros_usd' }) costMicrosUsd!: number;
  @Column('integer', { name: 'prompt_tokens' }) promptTokens!: number;
  @Column('integer', { name: 'completion_tokens' }) completionTokens!: number;
  @Column('integer', { name: 'total_tokens' }) totalTokens!: number;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
