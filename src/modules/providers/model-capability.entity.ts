import { Column, Entity, PrimaryColumn } from 'typeorm';

export type CapabilitySource = 'operator_override' | 'manual_probe';

/** An operator override or a recorded manual probe for one provider/model pair (gateway-wide configuration). */
@Entity({ name: 'gateway_model_capabilities' })
export class ModelCapabilityEntity {
  @PrimaryColumn('text') provider!: string;
  @PrimaryColumn('text') model!: string;
  @PrimaryColumn('text') source!: CapabilitySource;
  @Column('text', { name: 'tool_calling', nullable: true }) toolCalling!: string | null;
  @Column('boolean', { nullable: true }) streaming!: boolean | null;
  @Column('integer', { name: 'max_context_tokens', nullable: true }) maxContextTokens!: number | null;
  @Column('text', { name: 'image_input', nullable: true }) imageInput!: string | null;
  @Column('boolean', { name: 'assistant_prefill', nullable: true }) assistantPrefill!: boolean | null;
  @Column('text', { nullable: true }) note!: string | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
