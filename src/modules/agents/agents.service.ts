import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { type ApprovalPolicyName, expandApprovalPolicies } from '@core/config/groups/tasks.env';
import type { Principal } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import { decodePageCursor, encodePageCursor, keysetPage } from '@core/http/page-cursor';
import { openSecret, resolveSecretKey, sealSecret } from '@core/crypto/secret-box';
import { checkMcpServers, hasLiteralMcpValues, keepRedactedMcpValues, sealMcpServers, unsealMcpServers } from '@modules/mcp';
import { McpSecretKeyMissingError, type SavedAgentSource, type SavedAgentSpec } from '@modules/tasks';
import { type CreateAgentDto, type ListAgentsQueryDto, type PatchAgentDto, toAgentResponse, toAgentVersionResponse } from './agents.dto';
import { AgentNameTakenError, AgentNotFoundError, AgentVersionNotFoundError, InvalidAgentError } from './agents.errors';
import { type AgentDefinition, type AgentRow, AgentsRepository } from './agents.repository';
import { isUniqueViolation } from '@core/database/database.errors';

const DEFAULT_LIMIT = 50;

/**
 * Saved agents (docs/api.md §5 `agent_id`): named, tenant-scoped, versioned definitions. An update never changes a
 * version, it writes the next one; tasks and Agent Chat sessions record the version they ran. MCP servers are checked
 * and stored as on a task (the same walls, literal values sealed, responses redacted); tasks and chats reach agents
 * through the SAVED_AGENTS token, which AgentsModule provides with this service.
 */
@Injectable()
export class AgentsService implements SavedAgentSource {
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly repo: AgentsRepository,
    private readonly config: AppConfig,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  async create(p: Principal, dto: CreateAgentDto) {
    const definition = this.definition(p, dto, null);
    const id = `agent_${randomBytes(12).toString('hex')}`;
    const created = await this.repo.transaction((m) => this.repo.insert(m, { id, tenantId: p.tenantId, definition }));
    if (!created) throw new AgentNameTakenError(definition.name);
    return toAgentResponse((await this.repo.find(p.tenantId, id))!);
  }

  /** PUT (`replace`: absent fields go back to their defaults) or PATCH (absent fields kept): the next version. */
  async update(p: Principal, id: string, dto: CreateAgentDto | PatchAgentDto, replace: boolean) {
    await this.repo
      .transaction(async (m) => {
        const current = await this.repo.lock(m, p.tenantId, id);
        if (!current) throw new AgentNotFoundError(id);
        const merged = replace ? dto : { ...this.asInput(current.definition), ...stripUndefined(dto) };
        const definition = this.definition(p, merged as CreateAgentDto, current.definition);
        if (definition.name !== current.name && (await this.repo.nameTaken(m, p.tenantId, definition.name, id))) throw new AgentNameTakenError(definition.name);
        await this.repo.addVersion(m, p.tenantId, id, current.version + 1, definition);
      })
      .catch((err: unknown) => {
        // Two renames to one name at once: both checks saw it free, the unique index refuses the second.
        throw isUniqueViolation(err) ? new AgentNameTakenError(String((dto as { name?: unknown }).name)) : err;
      });
    return toAgentResponse((await this.repo.find(p.tenantId, id))!);
  }

  async list(tenantId: string, q: ListAgentsQueryDto) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.list(tenantId, limit + 1, decodeCursor(q.cursor));
    return keysetPage(rows, limit, toAgentResponse, encodeCursor);
  }

  async get(tenantId: string, id: string) {
    return toAgentResponse(await this.require(tenantId, id));
  }

  async versions(tenantId: string, id: string, q: ListAgentsQueryDto) {
    await this.require(tenantId, id);
    const limit = q.limit ?? DEFAULT_LIMIT;
    const before = q.cursor === undefined ? undefined : Number(q.cursor);
    if (before !== undefined && !(Number.isInteger(before) && before > 0)) throw new InvalidRequestError('cursor is not a next_cursor value of this list');
    const rows = await this.repo.versions(tenantId, id, limit + 1, before);
    return keysetPage(rows, limit, toAgentVersionResponse, (last) => String(last.version));
  }

  async version(tenantId: string, id: string, version: number) {
    await this.require(tenantId, id);
    const row = await this.repo.version(tenantId, id, version);
    if (!row) throw new AgentVersionNotFoundError(id, version);
    return toAgentVersionResponse(row);
  }

  async delete(tenantId: string, id: string) {
    if (!(await this.repo.delete(tenantId, id))) throw new AgentNotFoundError(id);
    return { id, deleted: true };
  }

  /** SavedAgentSource: the definition a task or a chat session runs, MCP secrets opened for the task to seal again. */
  async resolve(tenantId: string, id: string, version?: number): Promise<SavedAgentSpec> {
    const agent = await this.require(tenantId, id);
    let definition = agent.definition;
    if (version !== undefined && version !== agent.version) {
      const row = await this.repo.version(tenantId, id, version);
      if (!row) throw new AgentVersionNotFoundError(id, version);
      definition = row.definition;
    }
    return {
      id,
      version: version ?? agent.version,
      runtimeKind: definition.runtime_kind,
      provider: definition.provider,
      model: definition.model,
      systemPrompt: definition.system_prompt,
      mcpServers: this.opened(definition.mcp_servers),
      builtinTools: definition.builtin_tools,
      approvalPolicies: definition.approval_policies && expandApprovalPolicies(definition.approval_policies as ApprovalPolicyName[]),
      budgetMicrosUsd: definition.budget_micros_usd,
      maxTurns: definition.max_turns,
    };
  }

  private async require(tenantId: string, id: string): Promise<AgentRow> {
    const agent = await this.repo.find(tenantId, id);
    if (!agent) throw new AgentNotFoundError(id);
    return agent;
  }

  /**
   * The definition to store: MCP servers checked as a task's are (403 walls, 400 shape), literal values sealed. A value
   * sent back as `[redacted]` (a GET edited and PUT back) keeps what the previous version stored under that name.
   */
  private definition(p: Principal, dto: CreateAgentDto, previous: AgentDefinition | null): AgentDefinition {
    const servers = keepRedactedMcpValues(dto.mcp_servers ?? [], previous ? this.opened(previous.mcp_servers) : []);
    const problems = checkMcpServers(servers.list, this.config.mcp, this.config.tasks.mcp.maxServersPerTask, { hostPaths: p.kind !== 'api_key' });
    problems.push(...servers.problems);
    if (problems.length > 0) throw new InvalidAgentError(problems);
    let sealed = servers.list;
    if (hasLiteralMcpValues(sealed)) {
      const key = this.secretKey;
      if (!key) throw new McpSecretKeyMissingError();
      sealed = sealMcpServers(sealed, (plain) => sealSecret(key, plain)) as Record<string, unknown>[];
    }
    return {
      name: dto.name,
      description: dto.description ?? '',
      runtime_kind: dto.runtime_kind ?? 'agent',
      provider: dto.provider?.trim() ?? '',
      model: dto.model?.trim() ?? '',
      system_prompt: dto.system_prompt ?? '',
      builtin_tools: dto.builtin_tools ?? null,
      mcp_servers: sealed,
      approval_policies: dto.approval_policies ?? null,
      budget_micros_usd: dto.budget_micros_usd ?? 0,
      max_turns: dto.max_turns ?? 0,
    };
  }

  /** A stored definition as request fields (PATCH merges the change into it), MCP values opened to be checked and sealed again. */
  private asInput(d: AgentDefinition): CreateAgentDto {
    return { ...d, mcp_servers: this.opened(d.mcp_servers) };
  }

  private opened(list: Record<string, unknown>[]): Record<string, unknown>[] {
    return unsealMcpServers(list, (sealed) => openSecret(this.secretKey, sealed)) as Record<string, unknown>[];
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const encodeCursor = (a: AgentRow): string => encodePageCursor(a.created_at, a.id);

function decodeCursor(cursor: string | undefined): { createdAt: Date; id: string } | undefined {
  const c = decodePageCursor(cursor);
  return c && { createdAt: c.at, id: c.id };
}
