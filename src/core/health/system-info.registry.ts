import { Injectable, OnModuleInit } from '@nestjs/common';
import { type DeclaredMethod, Declarations, refuseTwice } from '@core/discovery/declarations';
import { type AdapterProcesses, type ApprovalMetricKind, type McpCacheCounts, MetricsService } from '@core/metrics/metrics.service';
import {
  ADAPTER_PROCESSES_GAUGE_METADATA,
  LIVENESS_METADATA,
  MCP_CACHE_GAUGE_METADATA,
  PENDING_APPROVALS_METADATA,
  SYSTEM_STAT_METADATA,
} from './system-info.decorator';

type Field = readonly [key: string, read: () => unknown];

/**
 * What modules add to `/healthz` (@Liveness), to `/hecate/v1/system/stats` (@SystemStat) and to the scrape-time gauges
 * of `/metrics` (@PendingApprovalsGauge, @McpCacheGauge, @AdapterProcessesGauge), found among the process's providers at
 * startup so that `core/` imports no module. A key or gauge declared twice is a boot error. Fields keep the order in which Nest initialises their modules
 * (deepest import first, then module order), the order in which the modules used to add them.
 */
@Injectable()
export class SystemInfoRegistry implements OnModuleInit {
  private liveness: Field[] = [];
  private stats: Field[] = [];

  constructor(
    private readonly declarations: Declarations,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.liveness = this.fields(LIVENESS_METADATA, 'liveness field');
    this.stats = this.fields(SYSTEM_STAT_METADATA, 'system stat');
    const gauges = this.declarations.methods<ApprovalMetricKind>(PENDING_APPROVALS_METADATA);
    refuseTwice(gauges, (g) => g.meta, 'pending approvals gauge');
    for (const { meta, call } of gauges) this.metrics.countPendingApprovals(meta, call as () => Promise<number>);
    for (const { call } of this.gauge(MCP_CACHE_GAUGE_METADATA, 'MCP cache gauge')) this.metrics.countMcpCache(call as () => McpCacheCounts);
    for (const { call } of this.gauge(ADAPTER_PROCESSES_GAUGE_METADATA, 'adapter processes gauge')) {
      this.metrics.countAdapterProcesses(call as () => AdapterProcesses);
    }
  }

  /** The one provider method declaring a gauge (a worker-only provider: none on the api), refused when two do. */
  private gauge(key: string, what: string): DeclaredMethod<string>[] {
    const declared = this.declarations.methods<string>(key);
    refuseTwice(declared, (d) => d.meta, what);
    return declared;
  }

  private fields(key: string, what: string): Field[] {
    const declared = this.declarations.methods<string>(key);
    refuseTwice(declared, (d) => d.meta, what);
    return inInitOrder(declared).map((d) => [d.meta, d.call as () => unknown] as const);
  }

  livenessFields(): Record<string, unknown> {
    return Object.fromEntries(this.liveness.map(([k, read]) => [k, read()]));
  }

  async statsFields(): Promise<Record<string, unknown>> {
    const entries = await Promise.all(this.stats.map(async ([k, read]) => [k, await read()] as const));
    return Object.fromEntries(entries);
  }
}

/** Nest's lifecycle order: the deepest module first, module order among equals (Array.prototype.sort is stable). */
const inInitOrder = <M>(declared: DeclaredMethod<M>[]): DeclaredMethod<M>[] => [...declared].sort((a, b) => b.depth - a.depth);
