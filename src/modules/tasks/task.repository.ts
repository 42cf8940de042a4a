import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, QueryDeepPartialEntity } from 'typeorm';
import type { TaskStatus } from './run-status';
import { TaskEntity } from './task.entity';

@Injectable()
export class TaskRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(TaskEntity);
  }

  async insert(row: TaskEntity): Promise<void> {
    await this.repo().insert(row as QueryDeepPartialEntity<TaskEntity>);
  }

  find(tenantId: string, id: string, manager?: EntityManager): Promise<TaskEntity | null> {
    return this.repo(manager).findOne({ where: { tenantId, id } });
  }

  /** Row-locks the task (serialises start/retry/resume/delete of one task). */
  lock(manager: EntityManager, tenantId: string, id: string): Promise<TaskEntity | null> {
    return this.repo(manager).createQueryBuilder('t').setLock('pessimistic_write').where('t.tenant_id = :tenantId AND t.id = :id', { tenantId, id }).getOne();
  }

  list(tenantId: string, q: { status?: string; executionKind?: string; clientRef?: string; limit: number }): Promise<TaskEntity[]> {
    return this.repo().find({
      where: {
        tenantId,
        ...(q.status ? { status: q.status as TaskStatus } : {}),
        ...(q.executionKind ? { executionKind: q.executionKind } : {}),
        ...(q.clientRef ? { clientRef: q.clientRef } : {}),
      },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: q.limit,
    });
  }

  /** Mirrors the latest run's status on the task. */
  async setStatus(
    manager: EntityManager,
    q: { tenantId: string; id: string; status: TaskStatus; latestRunId?: string; lastError?: string; started?: boolean; finished?: boolean },
  ): Promise<void> {
    const set: Record<string, unknown> = { status: q.status, updatedAt: () => 'now()' };
    if (q.latestRunId !== undefined) set.latestRunId = q.latestRunId;
    if (q.lastError !== undefined) set.lastError = q.lastError;
    if (q.started) set.startedAt = () => 'now()';
    if (q.finished) set.finishedAt = () => 'now()';
    await manager.createQueryBuilder().update(TaskEntity).set(set).where('tenant_id = :tenantId AND id = :id', q).execute();
  }

  async delete(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    await this.repo(manager).delete({ tenantId, id });
  }
}
