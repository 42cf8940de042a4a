import { formatUsd } from '@core/money';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { BeforeApplicationShutdown, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { InvalidRequestError } from '@core/http/domain-error';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
import { rootLogger } from '@core/logging/logger';
import type { UsageEventEntity } from './usage-event.entity';
import { UsageFilter, UsageRepository, type UsageBucket, type UsageGroup, type UsageWindow, type WindowTotals } from './usage.repository';
import { UsageSpool } from './usage-spool';

/**
 * A UUIDv7-style id (48-bit millisecond timestamp, then random): ledger rows are appended in time order, so
 * primary-key inserts stay on the right edge of the index (about half the cost of random v4 ids on PGlite).
 */
export function timeOrderedUuid(now = Date.now()): string {
  const random = randomUUID();
  const ts = now.toString(16).padStart(12, '0');
  return `${ts.slice(0, 8)}-${ts.slice(8, 12)}-7${random.slice(15)}`;
}

const BUCKET_MS: Record<UsageBucket, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** The window of a series when none is given: the last hour by minute, the last day by hour, the last 30 days by day. */
const DEFAULT_BUCKETS: Record<UsageBucket, number> = { minute: 60, hour: 24, day: 30 };
/** The most buckets one series spans (a chart's width, and a bound on the rows it groups). */
const MAX_BUCKETS = 1000;

/** What the gateway reports for each upstream call. */
export interface UsageRecord {
  tenantId: string;
  requestId: string;
  traceId?: string;
  apiKeyId?: string;
  provider: string;
  providerKind: string;
  model: string;
  routeReason: string;
  endpoint: string;
  attempt: number;
  status: 'ok' | 'error';
  errorType?: string;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costMicrosUsd: number;
  latencyMs: number;
  firstByteMs?: number;
}

// Rows per INSERT (Postgres, or PGlite when COPY is unavailable), with a yield between statements.
const CHUNK = { embedded: 50, scaled: 1000 } as const;
// Embedded spool: import into PGlite at this many rows, after this long, or when traffic pauses this long.
const SPOOL_IMPORT_ROWS = 5000;
const SPOOL_IMPORT_MAX_AGE_MS = 30_000;
const QUIET_MS = 250;

export const toUsageEventResponse = (r: UsageEventEntity) => ({
  id: r.id,
  tenant_id: r.tenantId,
  request_id: r.requestId,
  trace_id: r.traceId,
  api_key_id: r.apiKeyId,
  provider: r.provider,
  provider_kind: r.providerKind,
  model: r.model,
  route_reason: r.routeReason,
  endpoint: r.endpoint,
  attempt: r.attempt,
  status: r.status,
  error_type: r.errorType,
  stream: r.stream,
  input_tokens: r.inputTokens,
  output_tokens: r.outputTokens,
  cached_input_tokens: r.cachedInputTokens,
  cost_micros_usd: Number(r.costMicrosUsd),
  cost_usd: formatUsd(Number(r.costMicrosUsd)),
  latency_ms: r.latencyMs,
  first_byte_ms: r.firstByteMs,
  created_at: r.createdAt.toISOString(),
});

/**
 * Usage ledger, written off the request path: `record()` only appends to a bounded in-memory buffer; a timer
 * flushes it every GATEWAY_USAGE_FLUSH_INTERVAL — scaled mode with one multi-row INSERT per 1000 rows, embedded
 * mode into a CSV spool that is imported into PGlite in batches of COPYs (UsageSpool) — and shutdown flushes what is
 * left. A crash loses at most one flush interval; when the database is down the buffer keeps at most
 * GATEWAY_USAGE_BUFFER_MAX rows and drops the oldest (counted in system stats).
 */
@Injectable()
export class UsageLedgerService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private buffer: UsageEventEntity[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private spool: UsageSpool | undefined;
  private lastRecordAt = 0;
  private dropped = 0;
  private written = 0;
  private lastFailureLogAt = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: UsageRepository,
    private readonly info: SystemInfoRegistry,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.mode === 'embedded' && this.repo.isPglite()) {
      this.spool = new UsageSpool(join(this.config.database.dataDir, 'usage-spool'), this.repo);
      await this.spool.init().catch((err: unknown) => this.warn(err, 'usage spool import at boot failed; will retry'));
    }
    this.timer = setInterval(() => void this.enqueue(false), this.config.gateway.usage.flushIntervalMs);
    this.timer.unref();
    this.info.addStats('usage_ledger', () => ({
      buffered: this.buffer.length,
      spooled: this.spool?.pendingRows ?? 0,
      written: this.written,
      dropped: this.dropped,
    }));
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  record(r: UsageRecord): void {
    this.lastRecordAt = Date.now();
    if (this.buffer.length >= this.config.gateway.usage.bufferMax) {
      this.buffer.shift();
      this.dropped++;
    }
    this.buffer.push({
      id: timeOrderedUuid(),
      tenantId: r.tenantId,
      requestId: r.requestId,
      traceId: r.traceId ?? null,
      apiKeyId: r.apiKeyId ?? null,
      provider: r.provider,
      providerKind: r.providerKind,
      model: r.model,
      routeReason: r.routeReason,
      endpoint: r.endpoint,
      attempt: r.attempt,
      status: r.status,
      errorType: r.errorType ?? null,
      stream: r.stream,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      cachedInputTokens: r.cachedInputTokens,
      costMicrosUsd: r.costMicrosUsd,
      latencyMs: Math.round(r.latencyMs),
      firstByteMs: r.firstByteMs === undefined ? null : Math.round(r.firstByteMs),
      createdAt: new Date(),
    });
  }

  /** Writes everything buffered so far into the table (readers call it first so they see this process's rows). */
  flush(): Promise<void> {
    return this.enqueue(true);
  }

  /** Flushes run one at a time; `settle` also imports the embedded spool. */
  private enqueue(settle: boolean): Promise<void> {
    // The previous flush's failure already reached its own caller; here it must only not stop the queue.
    this.chain = this.chain.catch(() => undefined).then(() => (this.spool ? this.spoolDrain(this.spool, settle) : this.drain()));
    return this.chain;
  }

  private async spoolDrain(spool: UsageSpool, settle: boolean): Promise<void> {
    const rows = this.buffer;
    this.buffer = [];
    try {
      await spool.append(rows);
      this.written += rows.length;
    } catch (err) {
      this.requeue(rows);
      this.warn(err, 'usage spool append failed; will retry');
      return;
    }
    const quiet = Date.now() - this.lastRecordAt >= QUIET_MS;
    if (spool.pendingRows === 0 && !settle) return;
    if (settle || quiet || spool.pendingRows >= SPOOL_IMPORT_ROWS || spool.msSinceImport >= SPOOL_IMPORT_MAX_AGE_MS) {
      await spool.importAll().catch((err: unknown) => this.warn(err, 'usage spool import failed; will retry'));
    }
  }

  private requeue(rows: UsageEventEntity[]): void {
    this.buffer = rows.concat(this.buffer);
    const over = this.buffer.length - this.config.gateway.usage.bufferMax;
    if (over > 0) {
      this.buffer.splice(0, over);
      this.dropped += over;
    }
  }

  private warn(err: unknown, msg: string): void {
    if (Date.now() - this.lastFailureLogAt < 30_000) return;
    this.lastFailureLogAt = Date.now();
    rootLogger().warn({ err: err instanceof Error ? err.message : String(err), buffered: this.buffer.length }, msg);
  }

  private async drain(): Promise<void> {
    const rows = this.buffer;
    this.buffer = [];
    const size = CHUNK[this.config.mode];
    for (let i = 0; i < rows.length; i += size) {
      const chunk = rows.slice(i, i + size);
      try {
        await this.repo.insertMany(chunk);
        this.written += chunk.length;
      } catch (err) {
        // Put the unwritten rows back (oldest first), bounded like the buffer itself.
        this.requeue(rows.slice(i));
        this.warn(err, 'usage ledger flush failed; will retry');
        return;
      }
      if (i + size < rows.length) await new Promise<void>((r) => setImmediate(r));
    }
  }

  async events(filter: UsageFilter, limit: number) {
    await this.flush();
    return (await this.repo.list(filter, limit)).map(toUsageEventResponse);
  }

  /** What each window's key spent in it (after one flush of this process's buffer). */
  async windowTotals(tenantId: string, windows: UsageWindow[]): Promise<WindowTotals[]> {
    await this.flush();
    return this.repo.windowTotals(tenantId, windows);
  }

  async summary(filter: UsageFilter) {
    await this.flush();
    const rows = await this.repo.totals(filter);
    const sum = (k: 'calls' | 'requests' | 'errors' | 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'costMicrosUsd') =>
      rows.reduce((acc, r) => acc + r[k], 0);
    const cost = sum('costMicrosUsd');
    return {
      tenant_id: filter.tenantId,
      since: filter.since?.toISOString() ?? null,
      until: filter.until?.toISOString() ?? null,
      calls: sum('calls'),
      requests: sum('requests'),
      errors: sum('errors'),
      input_tokens: sum('inputTokens'),
      output_tokens: sum('outputTokens'),
      cached_input_tokens: sum('cachedInputTokens'),
      cost_micros_usd: cost,
      cost_usd: formatUsd(cost),
      by_model: rows.map((r) => ({
        provider: r.provider,
        model: r.model,
        calls: r.calls,
        requests: r.requests,
        errors: r.errors,
        input_tokens: r.inputTokens,
        output_tokens: r.outputTokens,
        cached_input_tokens: r.cachedInputTokens,
        cost_micros_usd: r.costMicrosUsd,
        cost_usd: formatUsd(r.costMicrosUsd),
      })),
    };
  }

  /**
   * Usage over time (`GET /hecate/v1/usage/series`): per bucket and group, over `since..until` (by default the last
   * DEFAULT_BUCKETS buckets), at most MAX_BUCKETS buckets wide.
   */
  async series(filter: UsageFilter, bucket: UsageBucket, groupBy: UsageGroup) {
    const until = filter.until ?? new Date();
    const since = filter.since ?? new Date(until.getTime() - DEFAULT_BUCKETS[bucket] * BUCKET_MS[bucket]);
    if (since >= until) throw new InvalidRequestError('since must be before until', { details: { param: 'since' } });
    if ((until.getTime() - since.getTime()) / BUCKET_MS[bucket] > MAX_BUCKETS) {
      throw new InvalidRequestError(`since..until spans more than ${MAX_BUCKETS} buckets of one ${bucket}: use a larger bucket or a shorter range`, {
        details: { param: 'bucket' },
      });
    }
    await this.flush();
    const points = await this.repo.series({ ...filter, since, until }, bucket, groupBy);
    return {
      since: since.toISOString(),
      until: until.toISOString(),
      bucket,
      group_by: groupBy,
      points: points.map((p) => ({
        at: p.at,
        key: p.key,
        calls: p.calls,
        errors: p.errors,
        input_tokens: p.inputTokens,
        output_tokens: p.outputTokens,
        cost_micros_usd: p.costMicrosUsd,
      })),
    };
  }
}
