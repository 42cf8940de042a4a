import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, Repository } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity';

@Injectable()
export class ApiKeyRepository {
  private readonly repo: Repository<ApiKeyEntity>;
  constructor(dataSource: DataSource) {
    this.repo = dataSource.getRepository(ApiKeyEntity);
  }

  async insert(row: ApiKeyEntity): Promise<void> {
    await this.repo.insert(row);
  }

  findActiveByPrefix(prefix: string): Promise<ApiKeyEntity | null> {
    return this.repo.findOne({ where: { prefix, revokedAt: IsNull() } });
  }

  list({ tenantId }: { tenantId: string | null }): Promise<ApiKeyEntity[]> {
    return this.repo.find({ where: tenantId === null ? {} : { tenantId }, order: { createdAt: 'DESC' } });
  }

  find({ tenantId, id }: { tenantId: string | null; id: string }): Promise<ApiKeyEntity | null> {
    return this.repo.findOne({ where: tenantId === null ? { id } : { id, tenantId } });
  }

  async revoke({ id, at }: { id: string; at: Date }): Promise<void> {
    await this.repo.update({ id, revokedAt: IsNull() }, { revokedAt: at });
  }

  async touch({ id, at }: { id: string; at: Date }): Promise<void> {
    await this.repo.update({ id }, { lastUsedAt: at });
  }
}
