import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, FindOptionsSelect, In, LessThan, Not, QueryDeepPartialEntity } from 'typeorm';
import { execSql } from '@core/database/sql';
import { TaskArtifactEntity } from './task-artifact.entity';

/** Listing columns: everything but the content (streamed snapshots and lists stay small). */
const SUMMARY_COLUMNS: FindOptionsSelect<TaskArtifactEntity> = {
  id: true,
  tenantId: true,
  taskId: true,
  runId: true,
  stepId: true,
  kind: true,
  name: true,
  description: true,
  mimeType: true,
  path: true,
  sizeBytes: true,
  sha256: true,
  truncated: true,
  status: true,
  createdAt: true,
  updatedAt: true,
};

@Injectable()
export class TaskArtifactRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(TaskArtifactEntity);
  }

  async insert(manager: EntityManager, row: TaskArtifactEntity): Promise<void> {
    await this.repo(manager).insert(row as QueryDeepPartialEntity<TaskArtifactEntity>);
  }

  listForRun(tenantId: string, runId: string, q: { kind?: string; withContent?: boolean } = {}): Promise<TaskArtifactEntity[]> {
    return this.repo().find({
      where: q.kind ? { tenantId, runId, kind: q.kind } : { tenantId, runId },
      order: { createdAt: 'ASC', id: 'ASC' },
      select: q.withContent ? undefined : SUMMARY_COLUMNS,
    });
  }

  /**
   * The newest artifact of `kind` of a run, with its content (one row, however many checkpoints the run wrote).
   * Checkpoints carry `metadata.seq` (their position in the run), which decides; the creation time breaks the rest.
   */
  latestOfKind(tenantId: string, runId: string, kind: string): Promise<TaskArtifactEntity | null> {
    return this.repo()
      .createQueryBuilder('a')
      .where('a.tenant_id = :tenantId AND a.run_id = :runId AND a.kind = :kind', { tenantId, runId, kind })
      .orderBy("(a.metadata->>'seq')::bigint", 'DESC', 'NULLS LAST')
      .addOrderBy('a.created_at', 'DESC')
      .limit(1)
      .getOne();
  }

  listForTask(tenantId: string, taskId: string): Promise<TaskArtifactEntity[]> {
    return this.repo().find({ where: { tenantId, taskId }, order: { createdAt: 'ASC', id: 'ASC' }, select: SUMMARY_COLUMNS });
  }

  find(tenantId: string, runId: string, id: string, manager?: EntityManager): Promise<TaskArtifactEntity | null> {
    return this.repo(manager).findOne({ where: { tenantId, runId, id } });
  }

  /** Locks a patch artifact for an apply/revert decision. */
  lock(manager: EntityManager, tenantId: string, runId: string, id: string): Promise<TaskArtifactEntity | null> {
    return this.repo(manager)
      .createQueryBuilder('a')
      .setLock('pessimistic_write')
      .where('a.tenant_id = :tenantId AND a.run_id = :runId AND a.id = :id', { tenantId, runId, id })
      .getOne();
  }

  async setStatus(manager: EntityManager, id: string, status: string): Promise<void> {
    await this.repo(manager).update({ id }, { status, updatedAt: () => 'now()' });
  }

  /** Retention: artifacts of finished runs older than `olderThan`, then beyond the newest `keepNewest`. */
  async prune(q: { olderThan: Date; keepNewest: number; protectedRunIds: string[] }): Promise<number> {
    const byAge = await this.repo().delete({ createdAt: LessThan(q.olderThan), runId: Not(In(q.protectedRunIds.length ? q.protectedRunIds : [''])) });
    const byCount = await execSql(
      this.dataSource.manager,
      `DELETE FROM task_artifacts WHERE id IN (
         SELECT id FROM task_artifacts WHERE NOT (run_id = ANY($2::text[])) ORDER BY created_at DESC OFFSET $1)`,
      [q.keepNewest, q.protectedRunIds],
    );
    return (byAge.affected ?? 0) + byCount.affected;
  }
}
