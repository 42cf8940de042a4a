import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An operator-configured provider (settings API). Providers are gateway-wide configuration, not tenant-owned
 * rows: every tenant routes through the same provider set. The id is the provider's name (what `provider`
 * pins in a request). A row with the name of an env-configured provider overrides it.
 */
@Entity({ name: 'gateway_providers' })
export class ProviderEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text', { name: 'preset_id', nullable: true }) presetId!: string | null;
  @Column('text', { name: 'custom_name', nullable: true }) customName!: string | null;
  @Column('text') kind!: string;
  @Column('text') protocol!: string;
  @Column('text', { name: 'base_url' }) baseUrl!: string;
  @Column('text', { name: 'default_model', nullable: true }) defaultModel!: string | null;
  /** AES-256-GCM ciphertext (`v1:` + base64(iv | tag | data)); never returned. */
  @Column('text', { name: 'api_key_ciphertext', nullable: true }) apiKeyCiphertext!: string | null;
  @Column('boolean') enabled!: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt!: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt!: Date;
}
