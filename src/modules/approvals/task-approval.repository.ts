import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, QueryDeepPartialEntity } from 'typeorm';
import { ApprovalStatus, TaskApprovalEntity } from './task-approval.entity';

@Injectable()
export class TaskApprovalRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, row: TaskApprovalEntity): Promise<void> {
    await manager.getRepository(TaskApprovalEntity).insert(row as QueryDeepPartialEntity<TaskApprovalEntity>);
  }

  listForTask(tenantId: string, taskId: string): Promise<TaskApprovalEntity[]> {
    return this.dataSource.getRepository(TaskApprovalEntity).find({ where: { tenantId, taskId }, order: { createdAt: 'ASC' } });
  }

  listForRun(tenantId: string, runId: string, manager: EntityManager = this.dataSource.manager): Promise<TaskApprovalEntity[]> {
    return manager.getRepository(TaskApprovalEntity).find({ where: { tenantId, runId }, order: { createdAt: 'ASC' } });
  }

  /** The tenant's pending approvals, oldest first (the partial index `task_approvals_pending`). */
  listPending(tenantId: string, limit: number): Promise<TaskApprovalEntity[]> {
    return this.dataSource
      .getRepository(TaskApprovalEntity)
      .find({ where: { tenantId, status: 'pending' }, order: { createdAt: 'ASC', id: 'ASC' }, take: limit });
  }

  find(tenantId: string, taskId: string, id: string, manager: EntityManager = this.dataSource.manager): Promise<TaskApprovalEntity | null> {
    return manager.getRepository(TaskApprovalEntity).findOne({ where: { tenantId, taskId, id } });
  }

  /** Compare-and-set from `pending`; returns the updated row or null when it was not pending. */
  async decide(
    manager: EntityManager,
    q: { tenantId: string; id: string; status: Exclude<ApprovalStatus, 'pending'>; resolvedBy: string; note: string },
  ): Promise<TaskApprovalEntity | null> {
    const result = await manager
      .createQueryBuilder()
      .update(TaskApprovalEntity)
      .set({ status: q.status, resolvedBy: q.resolvedBy, resolutionNote: q.note, resolvedAt: () => 'now()' })
      .where('tenant_id = :tenantId AND id = :id AND status = :pending', { tenantId: q.tenantId, id: q.id, pending: 'pending' })
      .execute();
    if (!result.affected) return null;
    return manager.getRepository(TaskApprovalEntity).findOne({ where: { tenantId: q.tenantId, id: q.id } });
  }

  /** Marks every pending approval of a run cancelled; returns them. */
  async cancelPendingForRun(manager: EntityManager, tenantId: string, runId: string, note: string): Promise<TaskApprovalEntity[]> {
    const repo = manager.getRepository(TaskApprovalEntity);
    const pending = await repo.find({ where: { tenantId, runId, status: 'pending' } });
    if (pending.length === 0) return [];
    await manager
      .createQueryBuilder()
      .update(TaskApprovalEntity)
      .set({ status: 'cancelled', resolvedBy: 'system', resolutionNote: note, resolvedAt: () => 'now()' })
      .where({ tenantId, id: In(pending.map((p) => p.id)), status: 'pending' })
      .execute();
    return repo.find({ where: { tenantId, id: In(pending.map((p) => p.id)) } });
  }

  async deleteForTask(manager: EntityManager, tenantId: string, taskId: string): Promise<void> {
    await manager.getRepository(TaskApprovalEntity).delete({ tenantId, taskId });
  }

  countPending(): Promise<number> {
    return this.dataSource.getRepository(TaskApprovalEntity).count({ where: { status: 'pending' } });
  }
}
