import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql } from '@core/database/sql';
import type { RevertResult, RevertRow } from './agent-chat-rows';
import { NOW, setClause } from './agent-chat-sql';

/** Reverts of a message's captured changes, queued by the api and run by a worker. */
@Injectable()
export class RevertsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async insertRevert(r: Pick<RevertRow, 'id' | 'tenant_id' | 'session_id' | 'message_id' | 'paths'>): Promise<void> {
    await execSql(this.manager, `INSERT INTO agent_chat_reverts (id, tenant_id, session_id, message_id, paths, status) VALUES ($1, $2, $3, $4, $5, 'queued')`, [
      r.id,
      r.tenant_id,
      r.session_id,
      r.message_id,
      JSON.stringify(r.paths),
    ]);
  }

  async findRevert(id: string): Promise<RevertRow | null> {
    const { rows } = await execSql<RevertRow>(this.manager, `SELECT * FROM agent_chat_reverts WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Takes a revert for this worker: queued, or running but abandoned (a worker died mid-way) for longer than `staleMs`. */
  async claimRevert(id: string, staleMs: number): Promise<RevertRow | null> {
    const { rows } = await execSql<RevertRow>(
      this.manager,
      `UPDATE agent_chat_reverts SET status = 'running', updated_at = now()
        WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND updated_at < now() - ($2 * interval '1 millisecond'))) RETURNING *`,
      [id, staleMs],
    );
    return rows[0] ?? null;
  }

  async finishRevert(id: string, set: { status: 'done' | 'failed'; result?: RevertResult; error?: { type: string; message: string } }): Promise<void> {
    const c = setClause({ ...set, updated_at: NOW }, 2);
    await execSql(this.manager, `UPDATE agent_chat_reverts SET ${c.sql} WHERE id = $1`, [id, ...c.params]);
  }
}
