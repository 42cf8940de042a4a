import { randomBytes } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import type { Principal } from '@core/context/request-context';
import { ForbiddenError } from '@core/http/domain-error';
import { decodePageCursor, encodePageCursor, keysetPage } from '@core/http/page-cursor';
import { MetricsService } from '@core/metrics/metrics.service';
import { BudgetBook } from './budget-book.service';
import { windowStart } from './budget-periods';
import { type CreateBudgetDto, type ListBudgetsQueryDto, type PatchBudgetDto, toBudgetResponse } from './budgets.dto';
import { BudgetExistsError, BudgetNotFoundError, InvalidBudgetError } from './budgets.errors';
import { type BudgetRow, BudgetsRepository } from './budgets.repository';

const DEFAULT_LIMIT = 50;
/** Budgets one tenant may have: every model call checks those that apply to it. */
export const MAX_BUDGETS_PER_TENANT = 100;

/** Does the subject exist in the tenant (an API key, a saved agent)? The API edge answers it (the key store is the api's). */
export type SubjectCheck = (tenantId: string, scope: 'api_key' | 'agent', id: string) => Promise<boolean>;

/**
 * Spend budgets (docs/budgets.md): the API's half. BudgetGuard enforces them on every model attempt. A budget belongs
 * to a tenant; the operator token may manage any tenant's (`tenant_id`), an admin key its own tenant's.
 */
@Injectable()
export class BudgetsService implements OnModuleInit {
  constructor(
    private readonly repo: BudgetsRepository,
    private readonly book: BudgetBook,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.metrics.countBudgets(async () =>
      (await this.repo.utilization()).map((r) => ({ scope: r.scope, budgets: Number(r.budgets), exhausted: Number(r.exhausted), maxRatio: r.max_ratio ?? 0 })),
    );
  }

  /** The tenant a request acts on: its own, or (the operator token only) the one it names. */
  tenantOf(p: Principal, tenantId: string | undefined): string {
    if (!tenantId || tenantId === p.tenantId) return p.tenantId;
    if (p.kind !== 'operator' && p.kind !== 'local_operator') throw new ForbiddenError("only the operator token may manage another tenant's budgets");
    return tenantId;
  }

  async create(p: Principal, dto: CreateBudgetDto, subjectExists: SubjectCheck) {
    const tenantId = this.tenantOf(p, dto.tenant_id);
    const subject = dto.subject_id ?? '';
    const problems: string[] = [];
    if (dto.scope === 'tenant' && subject) problems.push('subject_id: a tenant budget has no subject');
    if (dto.scope !== 'tenant' && !subject)
      problems.push(`subject_id: required for scope ${dto.scope} (the ${dto.scope === 'agent' ? 'saved agent' : 'API key'} id)`);
    if (problems.length > 0) throw new InvalidBudgetError(problems);
    if (dto.scope !== 'tenant' && !(await subjectExists(tenantId, dto.scope, subject)))
      throw new InvalidBudgetError([`subject_id: tenant ${tenantId} has no ${dto.scope === 'agent' ? 'saved agent' : 'API key'} ${subject}`]);
    if ((await this.repo.count(tenantId)) >= MAX_BUDGETS_PER_TENANT)
      throw new InvalidBudgetError([`a tenant may have at most ${MAX_BUDGETS_PER_TENANT} budgets; delete one or change its limit`]);
    const id = `bud_${randomBytes(12).toString('hex')}`;
    const inserted = await this.repo.insert({
      id,
      tenant_id: tenantId,
      name: dto.name ?? '',
      scope: dto.scope,
      subject_id: subject,
      period: dto.period,
      limit: dto.limit_micros_usd,
      thresholds: dto.thresholds ?? [],
      created_by: p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind,
    });
    if (!inserted) throw new BudgetExistsError(dto.scope, subject, dto.period);
    await this.book.changed();
    return this.get(tenantId, id);
  }

  async update(tenantId: string, id: string, dto: PatchBudgetDto) {
    if (!(await this.repo.update(tenantId, id, { name: dto.name, limit: dto.limit_micros_usd, thresholds: dto.thresholds }))) throw new BudgetNotFoundError(id);
    await this.book.changed();
    return this.get(tenantId, id);
  }

  async get(tenantId: string, id: string) {
    const [row] = await this.repo.list(tenantId, { id }, 1);
    if (!row) throw new BudgetNotFoundError(id);
    return (await this.views([row]))[0];
  }

  async list(tenantId: string, q: ListBudgetsQueryDto) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.list(tenantId, { scope: q.scope, subjectId: q.subject_id }, limit + 1, decodePageCursor(q.cursor));
    const page = keysetPage(
      rows,
      limit,
      (r) => r,
      (last) => encodePageCursor(last.created_at, last.id),
    );
    return { ...page, data: await this.views(page.data) };
  }

  async delete(tenantId: string, id: string) {
    if (!(await this.repo.delete(tenantId, id))) throw new BudgetNotFoundError(id);
    await this.book.changed();
    return { id, deleted: true };
  }

  /** Each budget with the counters of the window it is in now. */
  private async views(rows: BudgetRow[]) {
    const now = new Date();
    const keys = rows.map((b) => ({ budgetId: b.id, windowStart: windowStart(b.period, now) }));
    const windows = await this.repo.windows(keys);
    return rows.map((b, i) => toBudgetResponse(b, keys[i].windowStart, windows.get(b.id)));
  }
}
