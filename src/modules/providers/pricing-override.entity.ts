import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Operator price for one provider/model pair, micro-USD per 1M tokens (gateway-wide configuration). */
@Entity({ name: 'gateway_pricing_overrides' })
export class PricingOverrideEntity {
  @PrimaryColumn('text') provider!: string;
  @PrimaryColumn('text') model!: string;
  @Column('bigint', { name: 'input_micros_usd_per_million_tokens' }) input!: number;
  @Column('bigint', { name: 'output_micros_usd_per_million_tokens' }) output!: number;
  @Column('bigint', { name: 'cached_input_micros_usd_per_million_tokens' }) cachedInput!: number;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
