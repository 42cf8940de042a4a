import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** A saved agent's definition as one version stores it (API field names; `mcp_servers` literal values sealed). */
export interface AgentDefinition {
  name: string;
  description: string;
  runtime_kind: 'model' | 'agent';
  provider: string;
  model: string;
  system_prompt: string;
  builtin_tools: string[] | null;
  mcp_servers: Record<string, unknown>[];
  approval_policies: string[] | null;
  budget_micros_usd: number;
  max_turns: number;
}

export interface AgentRow {
  id: string;
  tenant_id: string;
  name: string;
  version: number;
  created_at: Date;
  updated_at: Date;
  definition: AgentDefinition;
}

export interface AgentVersionRow {
  agent_id: string;
  version: number;
  definition: AgentDefinition;
  created_at: Date;
}

const LATEST = `SELECT a.id, a.tenant_id, a.name, a.version, a.created_at, a.updated_at, v.definition
  FROM agents a JOIN agent_versions v ON v.agent_id = a.id AND v.version = a.version`;

/** Agents and their versions. Every read is scoped by tenant. */
@Injectable()
export class AgentsRepository {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(fn: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(fn);
  }

  /** False when the tenant already has an agent of that name. */
  async insert(m: EntityManager, row: { id: string; tenantId: string; definition: AgentDefinition }): Promise<boolean> {
    const inserted = (await m.query(
      // Millisecond created_at: the list's cursor carries it as a JS date.
      `INSERT INTO agents (id, tenant_id, name, version, created_at) VALUES ($1, $2, $3, 1, date_trunc('milliseconds', now()))
       ON CONFLICT (tenant_id, name) DO NOTHING RETURNING id`,
      [row.id, row.tenantId, row.definition.name],
    )) as unknown[];
    if (inserted.length === 0) return false;
    await this.insertVersion(m, row.tenantId, row.id, 1, row.definition);
    return true;
  }

  async find(tenantId: string, id: string, m: EntityManager = this.dataSource.manager): Promise<AgentRow | null> {
    const rows = (await m.query(`${LATEST} WHERE a.tenant_id = $1 AND a.id = $2`, [tenantId, id])) as AgentRow[];
    return rows[0] ?? null;
  }

  async lock(m: EntityManager, tenantId: string, id: string): Promise<AgentRow | null> {
    await m.query(`SELECT 1 FROM agents WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, id]);
    return this.find(tenantId, id, m);
  }

  async nameTaken(m: EntityManager, tenantId: string, name: string, exceptId: string): Promise<boolean> {
    const rows = (await m.query(`SELECT 1 FROM agents WHERE tenant_id = $1 AND name = $2 AND id <> $3`, [tenantId, name, exceptId])) as unknown[];
    return rows.length > 0;
  }

  /** The next version of a locked agent. */
  async addVersion(m: EntityManager, tenantId: string, id: string, version: number, definition: AgentDefinition): Promise<void> {
    await this.insertVersion(m, tenantId, id, version, definition);
    await m.query(`UPDATE agents SET name = $3, version = $4, updated_at = now() WHERE tenant_id = $1 AND id = $2`, [tenantId, id, definition.name, version]);
  }

  private async insertVersion(m: EntityManager, tenantId: string, id: string, version: number, definition: AgentDefinition): Promise<void> {
    await m.query(`INSERT INTO agent_versions (agent_id, version, tenant_id, definition) VALUES ($1, $2, $3, $4)`, [
      id,
      version,
      tenantId,
      JSON.stringify(definition),
    ]);
  }

  /** Newest first; `before`: the (created_at, id) of the previous page's last agent. */
  async list(tenantId: string, limit: number, before?: { createdAt: Date; id: string }): Promise<AgentRow[]> {
    return before
      ? ((await this.dataSource.query(`${LATEST} WHERE a.tenant_id = $1 AND (a.created_at, a.id) < ($2, $3) ORDER BY a.created_at DESC, a.id DESC LIMIT $4`, [
          tenantId,
          before.createdAt,
          before.id,
          limit,
        ])) as AgentRow[])
      : ((await this.dataSource.query(`${LATEST} WHERE a.tenant_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2`, [tenantId, limit])) as AgentRow[]);
  }

  /** Newest first; `before`: the previous page's last version. */
  async versions(tenantId: string, id: string, limit: number, before?: number): Promise<AgentVersionRow[]> {
    return (await this.dataSource.query(
      `SELECT agent_id, version, definition, created_at FROM agent_versions
        WHERE tenant_id = $1 AND agent_id = $2 AND ($3::int IS NULL OR version < $3) ORDER BY version DESC LIMIT $4`,
      [tenantId, id, before ?? null, limit],
    )) as AgentVersionRow[];
  }

  async version(tenantId: string, id: string, version: number): Promise<AgentVersionRow | null> {
    const rows = (await this.dataSource.query(
      `SELECT agent_id, version, definition, created_at FROM agent_versions WHERE tenant_id = $1 AND agent_id = $2 AND version = $3`,
      [tenantId, id, version],
    )) as AgentVersionRow[];
    return rows[0] ?? null;
  }

  /** Removes the agent and every version; false when the tenant has no such agent. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    // TypeORM answers a DELETE with [rows, affected count].
    const [, deleted] = (await this.dataSource.query(`DELETE FROM agents WHERE tenant_id = $1 AND id = $2`, [tenantId, id])) as [unknown[], number];
    return deleted > 0;
  }
}
