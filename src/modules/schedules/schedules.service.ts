import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { randomHex } from '@core/context/random-hex';
import type { Principal } from '@core/context/request-context';
import { openSecret, resolveSecretKey, sealSecret } from '@core/crypto/secret-box';
import { decodePageCursor, encodePageCursor, keysetPage } from '@core/http/page-cursor';
import { AgentChatQueueService, AgentChatService } from '@modules/agent-chat';
import { checkMcpServers, hasLiteralMcpValues, keepRedactedMcpValues, sealMcpServers, unsealMcpServers } from '@modules/mcp';
import { McpSecretKeyMissingError, SAVED_AGENTS, type SavedAgentSource } from '@modules/tasks';
import {
  type CreateScheduleDto,
  type ListFiringsQueryDto,
  type ListSchedulesQueryDto,
  type PatchScheduleDto,
  toFiringResponse,
  toScheduleResponse,
} from './schedules.dto';
import { InvalidScheduleError, ScheduleNotFoundError } from './schedules.errors';
import { type ScheduleRow, SchedulesRepository, type ScheduleTarget } from './schedules.repository';
import { cronProblem, nextFireAfter, nextFires, type ScheduleTiming, timezoneProblem } from './schedule-times';

const DEFAULT_LIMIT = 50;
const SHOWN_NEXT = 5;

/** The timing fields of a row as the pure timing functions read them. */
export const timingOf = (s: ScheduleRow): ScheduleTiming => ({
  kind: s.kind,
  cronExpression: s.cron_expression,
  timezone: s.timezone,
  runAt: s.run_at,
  startsAt: s.starts_at,
  endsAt: s.ends_at,
  maxFires: s.max_fires,
});

/**
 * Schedules (docs/schedules.md): tenant-scoped, each a cron expression in a time zone or one time, with the task each fire
 * starts. This service is the API's half; ScheduleFirer (workers) fires them. The task template is checked as far as it can
 * be without starting anything (its MCP servers against the same walls as a task's, a saved agent's existence); the rest is
 * checked when it fires, and a refused fire is a `failed` firing with the error a `POST /hecate/v1/tasks` would have got.
 */
@Injectable()
export class SchedulesService {
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly repo: SchedulesRepository,
    private readonly config: AppConfig,
    @Inject(SAVED_AGENTS) private readonly agents: SavedAgentSource,
    private readonly chats: AgentChatService,
    private readonly queue: AgentChatQueueService,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  async create(p: Principal, dto: CreateScheduleDto) {
    const row: ScheduleRow = {
      id: `sched_${randomHex(12)}`,
      tenant_id: p.tenantId,
      name: dto.name ?? '',
      ...this.timingFields(dto),
      catch_up: dto.catch_up ?? 'skip',
      catch_up_max: dto.catch_up_max ?? 1,
      target: await this.target(p, dto.target, null),
      host_paths: p.kind !== 'api_key',
      created_by: p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind,
      status: dto.paused ? 'paused' : 'active',
      next_fire_at: null,
      fire_count: 0,
      created_at: new Date(),
      updated_at: new Date(),
    };
    this.schedule(row, new Date());
    await this.repo.insert(row);
    return this.view((await this.repo.find(p.tenantId, row.id))!);
  }

  /** PATCH: the given fields change; timing changes take effect from now (fires already made stay). */
  async update(p: Principal, id: string, dto: PatchScheduleDto) {
    await this.repo.transaction(async (m) => {
      const row = await this.repo.lock(m, p.tenantId, id);
      if (!row) throw new ScheduleNotFoundError(id);
      const timing = this.timingFields({ ...this.asInput(row), ...stripUndefined(dto) } as CreateScheduleDto);
      const next: ScheduleRow = {
        ...row,
        ...timing,
        name: dto.name ?? row.name,
        catch_up: dto.catch_up ?? row.catch_up,
        catch_up_max: dto.catch_up_max ?? row.catch_up_max,
        target: dto.target ? await this.target(p, dto.target, row.target) : row.target,
        status: dto.paused === undefined ? (row.status === 'completed' ? 'active' : row.status) : dto.paused ? 'paused' : 'active',
      };
      this.schedule(next, new Date());
      await this.repo.save(m, next);
    });
    return this.get(p.tenantId, id);
  }

  /** Pause: no fire until resumed. Resume: the next fire time from now (what passed while paused is not fired). */
  async setPaused(tenantId: string, id: string, paused: boolean) {
    await this.repo.transaction(async (m) => {
      const row = await this.repo.lock(m, tenantId, id);
      if (!row) throw new ScheduleNotFoundError(id);
      if (row.status === 'completed') return;
      row.status = paused ? 'paused' : 'active';
      this.schedule(row, new Date());
      await this.repo.save(m, row);
    });
    return this.get(tenantId, id);
  }

  async list(tenantId: string, q: ListSchedulesQueryDto) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.list(tenantId, limit + 1, q.status, decodePageCursor(q.cursor));
    return keysetPage(
      rows,
      limit,
      (r) => this.view(r),
      (last) => encodePageCursor(last.created_at, last.id),
    );
  }

  async get(tenantId: string, id: string) {
    const row = await this.repo.find(tenantId, id);
    if (!row) throw new ScheduleNotFoundError(id);
    return this.view(row);
  }

  async delete(tenantId: string, id: string) {
    if (!(await this.repo.delete(tenantId, id))) throw new ScheduleNotFoundError(id);
    return { id, deleted: true };
  }

  async firings(tenantId: string, id: string, q: ListFiringsQueryDto) {
    await this.get(tenantId, id);
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.firings(tenantId, id, limit + 1, decodePageCursor(q.cursor));
    const page = keysetPage(
      rows,
      limit,
      (f) => f,
      (last) => encodePageCursor(last.scheduled_for, last.id),
    );
    // An Agent Chat firing's turn is the queue's to tell: it starts when the session is idle, after the fire.
    const turns = await Promise.all(
      page.data.map(async (f) =>
        f.session_id && f.queue_item_id ? ((await this.queue.item(tenantId, f.session_id, f.queue_item_id))?.turn_id ?? null) : null,
      ),
    );
    return { ...page, data: page.data.map((f, i) => toFiringResponse(f, turns[i])) };
  }

  private view(row: ScheduleRow) {
    const next =
      row.status === 'active' && row.next_fire_at ? [row.next_fire_at, ...nextFires(timingOf(row), row.next_fire_at, SHOWN_NEXT - 1, row.fire_count + 1)] : [];
    return toScheduleResponse(row, next);
  }

  /** `next_fire_at` and status of an active schedule from `now` (a schedule with no fire time left completes). */
  private schedule(row: ScheduleRow, now: Date): void {
    if (row.status !== 'active') {
      row.next_fire_at = null;
      return;
    }
    const t = timingOf(row);
    const exhausted = row.max_fires !== null && row.fire_count >= row.max_fires;
    // A one-time schedule due now (or within the misfire grace) fires at once; a cron schedule from the next fire time on.
    const graceFrom = new Date(now.getTime() - this.config.tasks.scheduler.misfireGraceMs);
    const next = exhausted ? null : t.kind === 'once' ? nextFireAfter(t, new Date(graceFrom.getTime() - 1)) : nextFireAfter(t, now);
    row.next_fire_at = next;
    if (!next) row.status = 'completed';
  }

  private timingFields(dto: CreateScheduleDto): Pick<ScheduleRow, 'kind' | 'cron_expression' | 'timezone' | 'run_at' | 'starts_at' | 'ends_at' | 'max_fires'> {
    const problems: string[] = [];
    const cron = dto.cron_expression?.trim() || null;
    const runAt = dto.run_at ? new Date(dto.run_at) : null;
    if ((cron === null) === (runAt === null)) problems.push('exactly one of cron_expression and run_at is required');
    const timezone = dto.timezone ?? 'UTC';
    const tzProblem = timezoneProblem(timezone);
    if (tzProblem) problems.push(tzProblem);
    const cronP = cron ? cronProblem(cron) : null;
    if (cronP) problems.push(cronP);
    const startsAt = dto.starts_at ? new Date(dto.starts_at) : null;
    const endsAt = dto.ends_at ? new Date(dto.ends_at) : null;
    if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) problems.push('ends_at must be later than starts_at');
    if (runAt && runAt.getTime() < Date.now() - this.config.tasks.scheduler.misfireGraceMs) problems.push('run_at is in the past');
    if (problems.length > 0) throw new InvalidScheduleError(problems);
    return {
      kind: cron ? 'cron' : 'once',
      cron_expression: cron,
      timezone,
      run_at: runAt,
      starts_at: startsAt,
      ends_at: endsAt,
      max_fires: dto.max_fires ?? null,
    };
  }

  /**
   * The target to store: the task template's MCP servers checked as a task's are and their literal values sealed (a value
   * sent back as `[redacted]` keeps the stored one); a saved agent must exist in the tenant.
   */
  private async target(p: Principal, dto: CreateScheduleDto['target'], previous: ScheduleTarget | null): Promise<ScheduleTarget> {
    if (dto.type === 'agent_chat_message') {
      const content = dto.content ?? '';
      if (!content.trim()) throw new InvalidScheduleError(['target.content must not be empty']);
      await this.chats.require(p.tenantId, dto.session_id ?? '');
      return { type: 'agent_chat_message', session_id: dto.session_id!, content, runtime_kind: dto.runtime_kind, provider: dto.provider, model: dto.model };
    }
    const task = { ...(dto.task as unknown as Record<string, unknown>) };
    if (typeof task.agent_id === 'string') await this.agents.resolve(p.tenantId, task.agent_id, task.agent_version as number | undefined);
    const stored = previous?.type === 'task' ? this.opened(previous.task.mcp_servers) : [];
    const servers = keepRedactedMcpValues((task.mcp_servers as Record<string, unknown>[]) ?? [], stored);
    const problems = [
      ...checkMcpServers(servers.list, this.config.mcp, this.config.tasks.mcp.maxServersPerTask, { hostPaths: p.kind !== 'api_key' }),
      ...servers.problems,
    ];
    if (problems.length > 0) throw new InvalidScheduleError(problems.map((m) => `target.task.${m}`));
    let sealed = servers.list;
    if (hasLiteralMcpValues(sealed)) {
      const key = this.secretKey;
      if (!key) throw new McpSecretKeyMissingError();
      sealed = sealMcpServers(sealed, (plain) => sealSecret(key, plain)) as Record<string, unknown>[];
    }
    if (sealed.length > 0) task.mcp_servers = sealed;
    return { type: 'task', task };
  }

  private opened(list: unknown): Record<string, unknown>[] {
    return unsealMcpServers((list as Record<string, unknown>[]) ?? [], (sealed) => openSecret(this.secretKey, sealed)) as Record<string, unknown>[];
  }

  /** A stored row as request fields (PATCH merges the change into it). */
  private asInput(row: ScheduleRow): Partial<CreateScheduleDto> {
    const iso = (d: Date | null) => d?.toISOString();
    return {
      cron_expression: row.cron_expression ?? undefined,
      timezone: row.timezone,
      run_at: iso(row.run_at),
      starts_at: iso(row.starts_at),
      ends_at: iso(row.ends_at),
      max_fires: row.max_fires ?? undefined,
    };
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
