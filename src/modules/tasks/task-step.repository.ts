import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, QueryDeepPartialEntity } from 'typeorm';
import { TaskStepEntity } from './task-step.entity';

/** `phase` of a running step whose worker handed the run over on a clean shutdown (see markHandedOver). */
export const STEP_PHASE_HANDED_OVER = 'handed_over';
/** `phase` of a running step dispatched again after its worker died under it once (the crash count, see RunWriter.step). */
export const STEP_PHASE_RERUN_AFTER_CRASH = 'rerun_after_crash';

@Injectable()
export class TaskStepRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(TaskStepEntity);
  }

  async insert(manager: EntityManager, row: TaskStepEntity): Promise<void> {
    await this.repo(manager).insert(row as QueryDeepPartialEntity<TaskStepEntity>);
  }

  listForRun(tenantId: string, runId: string, manager?: EntityManager): Promise<TaskStepEntity[]> {
    return this.repo(manager).find({ where: { tenantId, runId }, order: { index: 'ASC' } });
  }

  find(tenantId: string, runId: string, stepId: string): Promise<TaskStepEntity | null> {
    return this.repo().findOne({ where: { tenantId, runId, id: stepId } });
  }

  async update(manager: EntityManager, id: string, set: Partial<Record<keyof TaskStepEntity, unknown>>): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(TaskStepEntity)
      .set({ ...(set as object), updatedAt: () => 'now()' })
      .where('id = :id', { id })
      .execute();
  }

  /**
   * A draining worker hands its run over: the step it was running was cut off by a clean shutdown, not by a crash,
   * so the next attempt may run it again (when idempotent). Without this mark a running step means its worker died.
   */
  async markHandedOver(manager: EntityManager, tenantId: string, runId: string): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(TaskStepEntity)
      .set({ phase: STEP_PHASE_HANDED_OVER, updatedAt: () => 'now()' })
      .where('tenant_id = :tenantId AND run_id = :runId AND status = :running', { tenantId, runId, running: 'running' })
      .execute();
  }

  /** Cancel: steps still running are closed as cancelled. Returns them. */
  async cancelRunning(manager: EntityManager, tenantId: string, runId: string): Promise<TaskStepEntity[]> {
    const running = await this.repo(manager).find({ where: { tenantId, runId, status: 'running' } });
    for (const step of running) {
      await this.update(manager, step.id, { status: 'cancelled', finishedAt: () => 'now()', errorKind: 'cancelled', error: 'run cancelled' });
    }
    return running;
  }

  lastCompleted(tenantId: string, runId: string): Promise<TaskStepEntity | null> {
    return this.repo().findOne({ where: { tenantId, runId, status: 'completed' }, order: { index: 'DESC' } });
  }
}
