import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { SystemStats } from '@contracts/api';
import type { Assert, Documents } from '@core/http/openapi';

/**
 * `GET /hecate/v1/system/stats`: the queue, workers, storage and version, plus one object per module that reports
 * (`task_runtime`, `usage_ledger`, `sse`, `mcp_cache`, `agent_adapter_approval_mode`, …).
 */
@ApiSchema({ name: 'SystemStats' })
export class SystemStatsDto {
  queue_backend!: 'bullmq' | 'in_process';
  queue_depth!: number;
  /** Jobs by queue and state. */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'number' } } })
  queue_counts!: Record<string, Record<string, number>>;
  /** Per queue, the jobs the live workers run at once (each worker's concurrency, summed). */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' } })
  queue_capacity!: Record<string, number>;
  workers!: number;
  storage_backend!: 'postgres' | 'pglite';
  version!: string;
  uptime_s!: number;
  @ApiProperty({ type: 'object', additionalProperties: true })
  task_runtime?: unknown;
  @ApiProperty({ type: 'object', additionalProperties: true })
  usage_ledger?: unknown;
  @ApiProperty({ type: 'object', additionalProperties: true })
  sse?: unknown;
  @ApiProperty({ type: 'object', additionalProperties: true })
  mcp_cache?: unknown;
  @ApiProperty({ type: 'string' })
  agent_adapter_approval_mode?: unknown;
}

type Reported = 'task_runtime' | 'usage_ledger' | 'sse' | 'mcp_cache' | 'agent_adapter_approval_mode';
type _StatsDocumented = Assert<Documents<Omit<SystemStatsDto, Reported>, SystemStats>>;
