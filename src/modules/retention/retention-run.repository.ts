import { Injectable } from '@nestjs/common';
import { DataSource, QueryDeepPartialEntity } from 'typeorm';
import { RetentionRunEntity } from './retention-run.entity';

@Injectable()
export class RetentionRunRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(row: RetentionRunEntity): Promise<void> {
    await this.dataSource.getRepository(RetentionRunEntity).insert(row as QueryDeepPartialEntity<RetentionRunEntity>);
  }

  async finish(id: string, set: Pick<RetentionRunEntity, 'status' | 'results' | 'error'>): Promise<void> {
    await this.dataSource.getRepository(RetentionRunEntity).update({ id }, { ...set, finishedAt: () => 'now()' } as QueryDeepPartialEntity<RetentionRunEntity>);
  }

  list(limit: number): Promise<RetentionRunEntity[]> {
    return this.dataSource.getRepository(RetentionRunEntity).find({ order: { startedAt: 'DESC' }, take: limit });
  }
}
