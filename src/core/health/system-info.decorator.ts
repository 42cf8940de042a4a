import { SetMetadata } from '@nestjs/common';
import type { ApprovalMetricKind } from '@core/metrics/metrics.service';

export const SYSTEM_STAT_METADATA = 'hecate:system-stat';
export const LIVENESS_METADATA = 'hecate:liveness';
export const PENDING_APPROVALS_METADATA = 'hecate:pending-approvals';
export const MCP_CACHE_GAUGE_METADATA = 'hecate:mcp-cache-gauge';
export const ADAPTER_PROCESSES_GAUGE_METADATA = 'hecate:adapter-processes-gauge';

/**
 * Marks a provider method as the field `key` of `GET /hecate/v1/system/stats`: called at each request, its value
 * (awaited) is the field's. SystemInfoRegistry finds every one at startup; a key declared twice is a boot error.
 */
export const SystemStat = (key: string): MethodDecorator => SetMetadata(SYSTEM_STAT_METADATA, key);

/**
 * Marks a provider method as the field `key` of `/healthz` (a cheap, synchronous fact such as `sandbox`), on the
 * processes that build the provider. Found at startup like @SystemStat.
 */
export const Liveness = (key: string): MethodDecorator => SetMetadata(LIVENESS_METADATA, key);

/** Marks a provider method `() => Promise<number>` as the count of `hecate_approvals_pending{kind}`, read at each scrape. */
export const PendingApprovalsGauge = (kind: ApprovalMetricKind): MethodDecorator => SetMetadata(PENDING_APPROVALS_METADATA, kind);

/** Marks a provider method `() => { inUse, idle }` as this worker's MCP client cache (`hecate_mcp_cache_entries{state}`), read at each scrape. */
export const McpCacheGauge = (): MethodDecorator => SetMetadata(MCP_CACHE_GAUGE_METADATA, 'mcp_cache');

/**
 * Marks a provider method `() => { running, known }` as this worker's adapter processes (`hecate_adapter_processes{adapter}`),
 * read at each scrape: live processes by adapter id, and the ids shown even at 0.
 */
export const AdapterProcessesGauge = (): MethodDecorator => SetMetadata(ADAPTER_PROCESSES_GAUGE_METADATA, 'adapter_processes');
