import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { CapabilitySource, ModelCapabilityEntity } from './model-capability.entity';
import { PricingOverrideEntity } from './pricing-override.entity';

/** Capability overrides/probes and price overrides: small tables read whole into memory. */
@Injectable()
export class ModelSettingsRepository {
  private readonly caps: Repository<ModelCapabilityEntity>;
  private readonly prices: Repository<PricingOverrideEntity>;
  constructor(dataSource: DataSource) {
    this.caps = dataSource.getRepository(ModelCapabilityEntity);
    this.prices = dataSource.getRepository(PricingOverrideEntity);
  }

  listCapabilities(): Promise<ModelCapabilityEntity[]> {
    return this.caps.find();
  }

  async upsertCapability(row: ModelCapabilityEntity): Promise<void> {
    await this.caps.save(row);
  }

  async deleteCapability(key: { provider: string; model: string; source: CapabilitySource }): Promise<boolean> {
    return ((await this.caps.delete(key)).affected ?? 0) > 0;
  }

  listPrices(): Promise<PricingOverrideEntity[]> {
    return this.prices.find({ order: { provider: 'ASC', model: 'ASC' } });
  }

  async upsertPrice(row: PricingOverrideEntity): Promise<void> {
    await this.prices.save(row);
  }

  async deletePrice(key: { provider: string; model: string }): Promise<boolean> {
    return ((await this.prices.delete(key)).affected ?? 0) > 0;
  }
}
