import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { randomHex } from '@core/context/random-hex';
import { execSql } from '@core/database/sql';
import type { GrantRow } from './approval-rows';
import type { ToolKind } from './approval-vocabulary';

const UNEXPIRED = `(expires_at IS NULL OR expires_at > now())`;

/**
 * The grants an operator's decision leaves behind (`approval_grants`): allow or deny, for a session, for an adapter in
 * a workspace, or for an adapter anywhere, by tool kind, until `expires_at`. Session grants go with their session; the
 * others only with their own expiry.
 */
@Injectable()
export class GrantsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * The grant that decides a request, most specific first (this session; this adapter in this workspace; this
   * adapter anywhere), the latest of a scope winning; expired grants never match.
   */
  async match(tenantId: string, adapterId: string, toolKind: ToolKind, sessionId: string, workspace: string): Promise<GrantRow | null> {
    const { rows } = await execSql<GrantRow>(
      this.manager,
      `SELECT * FROM approval_grants
        WHERE tenant_id = $1 AND adapter_id = $2 AND tool_kind = $3 AND ${UNEXPIRED}
          AND ((scope = 'session' AND session_id = $4) OR (scope = 'workspace_tool' AND workspace = $5) OR scope = 'adapter_tool')
        ORDER BY CASE scope WHEN 'session' THEN 0 WHEN 'workspace_tool' THEN 1 ELSE 2 END, created_at DESC, id DESC
        LIMIT 1`,
      [tenantId, adapterId, toolKind, sessionId, workspace],
    );
    return rows[0] ?? null;
  }

  async insert(m: EntityManager, g: Omit<GrantRow, 'id' | 'created_at'>): Promise<GrantRow> {
    const { rows } = await execSql<GrantRow>(
      m,
      `INSERT INTO approval_grants (id, tenant_id, scope, decision, adapter_id, tool_kind, workspace, session_id, approval_id, note, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [`grant_${randomHex(12)}`, g.tenant_id, g.scope, g.decision, g.adapter_id, g.tool_kind, g.workspace, g.session_id, g.approval_id, g.note, g.expires_at],
    );
    return rows[0];
  }

  async list(tenantId: string, f: { adapter_id?: string; scope?: string; tool_kind?: string }): Promise<GrantRow[]> {
    const { rows } = await execSql<GrantRow>(
      this.manager,
      `SELECT * FROM approval_grants
        WHERE tenant_id = $1 AND ${UNEXPIRED} AND ($2::text IS NULL OR adapter_id = $2) AND ($3::text IS NULL OR scope = $3) AND ($4::text IS NULL OR tool_kind = $4)
        ORDER BY created_at DESC, id DESC LIMIT 500`,
      [tenantId, f.adapter_id ?? null, f.scope ?? null, f.tool_kind ?? null],
    );
    return rows;
  }

  async delete(tenantId: string, id: string): Promise<GrantRow | null> {
    const { rows } = await execSql<GrantRow>(this.manager, `DELETE FROM approval_grants WHERE id = $1 AND tenant_id = $2 RETURNING *`, [id, tenantId]);
    return rows[0] ?? null;
  }

  /** Retention: expired grants go (only their own expiry removes a grant). */
  async pruneExpired(): Promise<number> {
    return (await execSql(this.manager, `DELETE FROM approval_grants WHERE expires_at IS NOT NULL AND expires_at <= now()`)).affected;
  }
}
