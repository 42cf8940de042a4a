import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { UsageEventEntity } from './usage-event.entity';

export interface UsageFilter {
  /** null: every tenant (operator). */
  tenantId: string | null;
  since?: Date;
  until?: Date;
  provider?: string;
  model?: string;
  requestId?: string;
}

export interface UsageTotals {
  provider: string;
  model: string;
  calls: number;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costMicrosUsd: number;
}

@Injectable()
export class UsageRepository {
  private readonly repo: Repository<UsageEventEntity>;
  constructor(dataSource: DataSource) {
    this.repo = dataSource.getRepository(UsageEventEntity);
  }

  /** One multi-row INSERT. */
  async insertMany(rows: UsageEventEntity[]): Promise<void> {
    if (rows.length > 0) await this.repo.createQueryBuilder().insert().values(rows).execute();
  }

  private filtered(f: UsageFilter) {
    const qb = this.repo.createQueryBuilder('u');
    if (f.tenantId !== null) qb.andWhere('u.tenant_id = :tenantId', { tenantId: f.tenantId });
    if (f.since) qb.andWhere('u.created_at >= :since', { since: f.since });
    if (f.until) qb.andWhere('u.created_at < :until', { until: f.until });
    if (f.provider) qb.andWhere('u.provider = :provider', { provider: f.provider });
    if (f.model) qb.andWhere('u.model = :model', { model: f.model });
    if (f.requestId) qb.andWhere('u.request_id = :requestId', { requestId: f.requestId });
    return qb;
  }

  list(f: UsageFilter, limit: number): Promise<UsageEventEntity[]> {
    return this.filtered(f).orderBy('u.created_at', 'DESC').addOrderBy('u.id', 'DESC').limit(limit).getMany();
  }

  async totals(f: UsageFilter): Promise<UsageTotals[]> {
    const rows = await this.filtered(f)
      .select('u.provider', 'provider')
      .addSelect('u.model', 'model')
      .addSelect('count(*)', 'calls')
      .addSelect(`count(*) FILTER (WHERE u.status = 'ok')`, 'requests')
      .addSelect(`count(*) FILTER (WHERE u.status <> 'ok')`, 'errors')
      .addSelect('coalesce(sum(u.input_tokens), 0)', 'input_tokens')
      .addSelect('coalesce(sum(u.output_tokens), 0)', 'output_tokens')
      .addSelect('coalesce(sum(u.cached_input_tokens), 0)', 'cached_input_tokens')
      .addSelect('coalesce(sum(u.cost_micros_usd), 0)', 'cost')
      .groupBy('u.provider')
      .addGroupBy('u.model')
      .orderBy('u.provider')
      .addOrderBy('u.model')
      .getRawMany<Record<string, string | number>>();
    return rows.map((r) => ({
      provider: String(r.provider),
      model: String(r.model),
      calls: Number(r.calls),
      requests: Number(r.requests),
      errors: Number(r.errors),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      cachedInputTokens: Number(r.cached_input_tokens),
      costMicrosUsd: Number(r.cost),
    }));
  }
}
