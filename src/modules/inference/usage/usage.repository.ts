import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { isPglite } from '@core/database/sql';
import { UsageEventEntity } from './usage-event.entity';

export interface UsageFilter {
  /** null: every tenant (operator). */
  tenantId: string | null;
  since?: Date;
  until?: Date;
  provider?: string;
  model?: string;
  requestId?: string;
  apiKeyId?: string;
  /** Rows made with the keys minted for this External Agent session (its metered adapter's model calls). */
  agentChatSessionId?: string;
}

/** One API key's calls in [since, until). */
export interface UsageWindow {
  apiKeyId: string;
  since: Date;
  until: Date;
}

export interface WindowTotals {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costMicrosUsd: number;
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

export type UsageBucket = 'minute' | 'hour' | 'day';
export type UsageGroup = 'provider' | 'model' | 'api_key' | 'tenant';

/** One bucket of one group: what its calls used. */
export interface UsagePoint {
  /** The bucket's start, UTC, ISO 8601. */
  at: string;
  key: string | null;
  calls: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costMicrosUsd: number;
}

/** The column per group, likewise. */
const GROUP_COLUMN: Record<UsageGroup, string> = { provider: 'u.provider', model: 'u.model', api_key: 'u.api_key_id', tenant: 'u.tenant_id' };
/** date_trunc's unit per bucket: the SQL text comes from this table, never from the request. */
const BUCKET_UNIT: Record<UsageBucket, string> = { minute: 'minute', hour: 'hour', day: 'day' };

const COLUMNS = [
  'id',
  'tenant_id',
  'request_id',
  'trace_id',
  'api_key_id',
  'provider',
  'provider_kind',
  'model',
  'route_reason',
  'endpoint',
  'attempt',
  'status',
  'error_type',
  'stream',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cost_micros_usd',
  'latency_ms',
  'first_byte_ms',
  'created_at',
] as const;

const rowValues = (r: UsageEventEntity): unknown[] => [
  r.id,
  r.tenantId,
  r.requestId,
  r.traceId,
  r.apiKeyId,
  r.provider,
  r.providerKind,
  r.model,
  r.routeReason,
  r.endpoint,
  r.attempt,
  r.status,
  r.errorType,
  r.stream,
  r.inputTokens,
  r.outputTokens,
  r.cachedInputTokens,
  r.costMicrosUsd,
  r.latencyMs,
  r.firstByteMs,
  r.createdAt.toISOString(),
];

/** Rows as CSV in COLUMNS order (the spool's and COPY's format). */
export const toCsv = (rows: UsageEventEntity[]): string => rows.map((r) => rowValues(r).map(csvField).join(',')).join('\n');

const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  return `"${String(v).replace(/"/g, '""')}"`;
};

/** The embedded backend's PGlite handle, reached through a checked-out TypeORM connection. */
interface PgliteLike {
  query(sql: string, params?: unknown[], options?: { blob: Blob }): Promise<unknown>;
}

@Injectable()
export class UsageRepository {
  private readonly repo: Repository<UsageEventEntity>;
  /** undefined: not detected yet; null: not PGlite (or no handle), use the portable INSERT. */
  private pglite: boolean | undefined;

  constructor(private readonly dataSource: DataSource) {
    this.repo = dataSource.getRepository(UsageEventEntity);
  }

  /**
   * Appends ledger rows. Postgres: one INSERT … SELECT FROM unnest(arrays) (21 parameters whatever the row
   * count). PGlite: COPY FROM a CSV blob, about three times cheaper than a parameterised INSERT there — which
   * matters because PGlite runs on the event loop of the api process.
   */
  async insertMany(rows: UsageEventEntity[]): Promise<void> {
    if (rows.length === 0) return;
    if (this.isPglite() && (await this.copyCsv(toCsv(rows)))) return;
    const arrays = COLUMNS.map(() => [] as unknown[]);
    for (const r of rows) rowValues(r).forEach((v, i) => arrays[i].push(v));
    await this.dataSource.query(
      `INSERT INTO usage_events (${COLUMNS.join(', ')})
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
         $11::int[], $12::text[], $13::text[], $14::bool[], $15::int[], $16::int[], $17::int[], $18::int8[], $19::int[], $20::int[], $21::timestamptz[])`,
      arrays,
    );
  }

  /** The embedded backend (PGlite), where COPY from a CSV blob is available. */
  isPglite(): boolean {
    this.pglite ??= isPglite(this.dataSource);
    return this.pglite;
  }

  /**
   * PGlite only: COPY CSV rows (COLUMNS order). `skipExisting` goes through a temporary table and skips ids
   * already present (a spool file that may have been imported just before a crash). False when the PGlite
   * handle is not reachable (the caller then falls back to INSERT).
   */
  async copyCsv(csv: string, { skipExisting = false } = {}): Promise<boolean> {
    const runner = this.dataSource.createQueryRunner();
    try {
      // The checked-out connection holds PGlite's single-connection lock for the duration of the COPY.
      const connection = (await runner.connect()) as { db?: PgliteLike } | undefined;
      const db = connection?.db;
      if (!db || typeof db.query !== 'function') {
        this.pglite = false;
        return false;
      }
      const blob = { blob: new Blob([csv]) };
      if (!skipExisting) {
        await db.query(`COPY usage_events (${COLUMNS.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`, [], blob);
        return true;
      }
      await db.query('CREATE TEMP TABLE IF NOT EXISTS usage_events_import (LIKE usage_events)');
      await db.query('TRUNCATE usage_events_import');
      await db.query(`COPY usage_events_import (${COLUMNS.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`, [], blob);
      await db.query('INSERT INTO usage_events SELECT * FROM usage_events_import ON CONFLICT (id) DO NOTHING');
      return true;
    } finally {
      await runner.release();
    }
  }

  private filtered(f: UsageFilter) {
    const qb = this.repo.createQueryBuilder('u');
    if (f.tenantId !== null) qb.andWhere('u.tenant_id = :tenantId', { tenantId: f.tenantId });
    if (f.since) qb.andWhere('u.created_at >= :since', { since: f.since });
    if (f.until) qb.andWhere('u.created_at < :until', { until: f.until });
    if (f.provider) qb.andWhere('u.provider = :provider', { provider: f.provider });
    if (f.model) qb.andWhere('u.model = :model', { model: f.model });
    if (f.requestId) qb.andWhere('u.request_id = :requestId', { requestId: f.requestId });
    if (f.apiKeyId) qb.andWhere('u.api_key_id = :apiKeyId', { apiKeyId: f.apiKeyId });
    if (f.agentChatSessionId)
      qb.andWhere('u.api_key_id IN (SELECT k.id::text FROM api_keys k WHERE k.agent_chat_session_id = :agentChatSessionId)', {
        agentChatSessionId: f.agentChatSessionId,
      });
    return qb;
  }

  list(f: UsageFilter, limit: number): Promise<UsageEventEntity[]> {
    return this.filtered(f).orderBy('u.created_at', 'DESC').addOrderBy('u.id', 'DESC').limit(limit).getMany();
  }

  /** Per window (a key's calls in [since, until)), in the windows' order: one statement however many windows. */
  async windowTotals(tenantId: string, windows: UsageWindow[]): Promise<WindowTotals[]> {
    if (windows.length === 0) return [];
    const rows = (await this.dataSource.query(
      `SELECT w.idx,
              count(u.id) FILTER (WHERE u.status = 'ok') AS requests,
              coalesce(sum(u.input_tokens), 0) AS input_tokens,
              coalesce(sum(u.output_tokens), 0) AS output_tokens,
              coalesce(sum(u.cost_micros_usd), 0) AS cost
         FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) WITH ORDINALITY AS w(api_key_id, since, until, idx)
         LEFT JOIN usage_events u ON u.tenant_id = $1 AND u.api_key_id = w.api_key_id AND u.created_at >= w.since AND u.created_at < w.until
        GROUP BY w.idx ORDER BY w.idx`,
      [tenantId, windows.map((w) => w.apiKeyId), windows.map((w) => w.since.toISOString()), windows.map((w) => w.until.toISOString())],
    )) as Array<Record<string, string | number>>;
    return rows.map((r) => ({
      requests: Number(r.requests),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      costMicrosUsd: Number(r.cost),
    }));
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

  /** Calls, tokens and cost per time bucket (UTC) and group, in time order: only the buckets that have calls. */
  async series(f: UsageFilter, bucket: UsageBucket, group: UsageGroup): Promise<UsagePoint[]> {
    const column = GROUP_COLUMN[group];
    const at = `to_char(date_trunc('${BUCKET_UNIT[bucket]}', u.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
    const rows = await this.filtered(f)
      .select(at, 'at')
      .addSelect(column, 'key')
      .addSelect('count(*)', 'calls')
      .addSelect(`count(*) FILTER (WHERE u.status <> 'ok')`, 'errors')
      .addSelect('coalesce(sum(u.input_tokens), 0)', 'input_tokens')
      .addSelect('coalesce(sum(u.output_tokens), 0)', 'output_tokens')
      .addSelect('coalesce(sum(u.cost_micros_usd), 0)', 'cost')
      .groupBy(at)
      .addGroupBy(column)
      .orderBy(at)
      .addOrderBy(column)
      .getRawMany<Record<string, string | number | null>>();
    return rows.map((r) => ({
      at: String(r.at),
      key: r.key === null ? null : String(r.key),
      calls: Number(r.calls),
      errors: Number(r.errors),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      costMicrosUsd: Number(r.cost),
    }));
  }
}
