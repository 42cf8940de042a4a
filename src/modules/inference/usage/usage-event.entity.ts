import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One upstream call (ledger row): written off the request path by the batched writer. */
@Entity({ name: 'usage_events' })
export class UsageEventEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column('text', { name: 'tenant_id' }) tenantId!: string;
  @Column('text', { name: 'request_id' }) requestId!: string;
  @Column('text', { name: 'trace_id', nullable: true }) traceId!: string | null;
  @Column('text', { name: 'api_key_id', nullable: true }) apiKeyId!: string | null;
  @Column('text') provider!: string;
  @Column('text', { name: 'provider_kind' }) providerKind!: string;
  @Column('text') model!: string;
  @Column('text', { name: 'route_reason' }) routeReason!: string;
  @Column('text') endpoint!: string;
  @Column('integer') attempt!: number;
  @Column('text') status!: string;
  @Column('text', { name: 'error_type', nullable: true }) errorType!: string | null;
  @Column('boolean') stream!: boolean;
  @Column('integer', { name: 'input_tokens' }) inputTokens!: number;
  @Column('integer', { name: 'output_tokens' }) outputTokens!: number;
  @Column('integer', { name: 'cached_input_tokens' }) cachedInputTokens!: number;
  @Column('bigint', { name: 'cost_micros_usd' }) costMicrosUsd!: number;
  @Column('integer', { name: 'latency_ms' }) latencyMs!: number;
  @Column('integer', { name: 'first_byte_ms', nullable: true }) firstByteMs!: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
}
