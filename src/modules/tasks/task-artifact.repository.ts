import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, FindOptionsSelect, QueryDeepPartialEntity } from 'typeorm';
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

  async listForRun(tenantId: string, runId: string, q: { kind?: string; withContent?: boolean } = {}): Promise<TaskArtifactEntity[]> {
    const rows = await this.repo().find({
      where: q.kind ? { tenantId, runId, kind: q.kind } : { tenantId, runId },
      order: { createdAt: 'ASC', id: 'ASC' },
      select: q.withContent ? undefined : SUMMARY_COLUMNS,
    });
    return q.withContent ? ((await Promise.all(rows.map((r) => this.whole(r)))) as TaskArtifactEntity[]) : rows;
  }

  /**
   * An artifact as readers see it. A checkpoint stored as what it appends (`metadata.appends` names the JSON array, e.g.
   * the agent loop's `messages`; `metadata.base` is how many came before it) is answered whole: its run's rows of the
   * same kind up to its `seq`, from the last one that starts at 0, their arrays concatenated and the newest's other fields.
   */
  private async whole(row: TaskArtifactEntity | null): Promise<TaskArtifactEntity | null> {
    const meta = row?.metadata as { appends?: unknown; seq?: unknown; base?: unknown } | undefined;
    if (!row || typeof meta?.appends !== 'string' || meta.base === 0) return row;
    const key = meta.appends;
    const { rows } = await execSql<{ content_text: string; base: string | null }>(
      this.dataSource.manager,
      `SELECT content_text, metadata->>'base' AS base FROM task_artifacts
        WHERE tenant_id = $1 AND run_id = $2 AND kind = $3 AND (metadata->>'seq')::bigint <= $4::bigint
        ORDER BY (metadata->>'seq')::bigint, created_at, id`,
      [row.tenantId, row.runId, row.kind, Number(meta.seq)],
    );
    let start = 0;
    rows.forEach((r, i) => {
      if (r.base === '0') start = i;
    });
    let doc: Record<string, unknown> = {};
    for (const r of rows.slice(start)) {
      const part = JSON.parse(r.content_text) as Record<string, unknown>;
      const before = Array.isArray(doc[key]) ? (doc[key] as unknown[]) : [];
      doc = { ...part, [key]: before.concat(Array.isArray(part[key]) ? (part[key] as unknown[]) : []) };
    }
    const content = JSON.stringify(doc);
    return {
      ...row,
      contentText: content,
      sizeBytes: Buffer.byteLength(content),
      sha256: createHash('sha256').update(content).digest('hex'),
    };
  }

  /**
   * The newest artifact of `kind` of a run, with its content (one row, however many checkpoints the run wrote).
   * Checkpoints carry `metadata.seq` (their position in the run), which decides; the creation time breaks the rest.
   */
  async latestOfKind(tenantId: string, runId: string, kind: string): Promise<TaskArtifactEntity | null> {
    const row = await this.repo()
      .createQueryBuilder('a')
      .where('a.tenant_id = :tenantId AND a.run_id = :runId AND a.kind = :kind', { tenantId, runId, kind })
      .orderBy("(a.metadata->>'seq')::bigint", 'DESC', 'NULLS LAST')
      .addOrderBy('a.created_at', 'DESC')
      .limit(1)
      .getOne();
    return this.whole(row);
  }

  /** What a run stored so far, in bytes: its artifacts' content and its steps' results (the storage cap counts these). */
  async storedBytes(tenantId: string, runId: string): Promise<number> {
    const { rows } = await execSql<{ n: string }>(
      this.dataSource.manager,
      `SELECT ((SELECT COALESCE(sum(size_bytes), 0) FROM task_artifacts WHERE tenant_id = $1 AND run_id = $2)
             + (SELECT COALESCE(sum(octet_length(result)), 0) FROM task_steps WHERE tenant_id = $1 AND run_id = $2))::bigint AS n`,
      [tenantId, runId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  listForTask(tenantId: string, taskId: string): Promise<TaskArtifactEntity[]> {
    return this.repo().find({ where: { tenantId, taskId }, order: { createdAt: 'ASC', id: 'ASC' }, select: SUMMARY_COLUMNS });
  }

  async find(tenantId: string, runId: string, id: string, manager?: EntityManager): Promise<TaskArtifactEntity | null> {
    return this.whole(await this.repo(manager).findOne({ where: { tenantId, runId, id } }));
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

  /**
   * Retention: artifacts of finished runs older than `olderThan`, then beyond the newest `keepNewest`. A checkpoint chain
   * (rows that append to the ones before, `metadata.appends`) goes as a whole: a run's conversation is never left partial.
   */
  async prune(q: { olderThan: Date; keepNewest: number; protectedRunIds: string[] }): Promise<number> {
    const chains = `OR (t.metadata ? 'appends' AND (t.run_id, t.kind) IN (SELECT run_id, kind FROM doomed WHERE metadata ? 'appends'))`;
    const byAge = await execSql(
      this.dataSource.manager,
      `WITH doomed AS (SELECT id, run_id, kind, metadata FROM task_artifacts WHERE created_at < $1 AND NOT (run_id = ANY($2::text[])))
       DELETE FROM task_artifacts t WHERE t.id IN (SELECT id FROM doomed) ${chains}`,
      [q.olderThan, q.protectedRunIds],
    );
    const byCount = await execSql(
      this.dataSource.manager,
      `WITH doomed AS (SELECT id, run_id, kind, metadata FROM task_artifacts WHERE NOT (run_id = ANY($2::text[])) ORDER BY created_at DESC OFFSET $1)
       DELETE FROM task_artifacts t WHERE t.id IN (SELECT id FROM doomed) ${chains}`,
      [q.keepNewest, q.protectedRunIds],
    );
    return byAge.affected + byCount.affected;
  }
}
