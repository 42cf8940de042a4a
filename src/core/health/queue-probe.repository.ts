import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { QueueProbeEntity } from './queue-probe.entity';

@Injectable()
export class QueueProbeRepository {
  private readonly repo: Repository<QueueProbeEntity>;
  constructor(private readonly dataSource: DataSource) {
    this.repo = dataSource.getRepository(QueueProbeEntity);
  }

  async insert(row: QueueProbeEntity): Promise<void> {
    await this.repo.insert(row);
  }

  async delete(id: string): Promise<void> {
    await this.repo.delete({ id });
  }

  find({ tenantId, id }: { tenantId: string; id: string }): Promise<QueueProbeEntity | null> {
    return this.repo.findOne({ where: { id, tenantId } });
  }

  /** Records a delivery: attempts+1, status running, and which worker took it. */
  async markStarted({ id, worker }: { id: string; worker: string }): Promise<QueueProbeEntity | null> {
    await this.repo
      .createQueryBuilder()
      .update()
      .set({ status: 'running', worker, attempts: () => 'attempts + 1', startedAt: () => 'now()' })
      .where('id = :id AND status <> :done', { id, done: 'completed' })
      .execute();
    return this.repo.findOne({ where: { id } });
  }

  async markCompleted(id: string): Promise<void> {
    await this.repo.update({ id }, { status: 'completed', completedAt: () => 'now()' });
  }
}
