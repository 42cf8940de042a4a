import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { ProviderEntity } from './provider.entity';

@Injectable()
export class ProviderRepository {
  private readonly repo: Repository<ProviderEntity>;
  constructor(dataSource: DataSource) {
    this.repo = dataSource.getRepository(ProviderEntity);
  }

  list(): Promise<ProviderEntity[]> {
    return this.repo.find({ order: { id: 'ASC' } });
  }

  find(id: string): Promise<ProviderEntity | null> {
    return this.repo.findOne({ where: { id } });
  }

  async insert(row: ProviderEntity): Promise<void> {
    await this.repo.insert(row);
  }

  async save(row: ProviderEntity): Promise<void> {
    await this.repo.save(row);
  }

  async delete(id: string): Promise<boolean> {
    return ((await this.repo.delete({ id })).affected ?? 0) > 0;
  }
}
