import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsISO8601, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import type { Principal } from '@core/context/request-context';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import type { GatewayTrace, TraceAttempt, TraceCandidate, TraceSpan } from './trace-store.service';
import type { UsageLedgerService } from './usage-ledger.service';
import type { UsageBucket, UsageGroup } from './usage.repository';

export class UsageQueryDto {
  @IsOptional() @IsISO8601() since?: string;
  @IsOptional() @IsISO8601() until?: string;
  @IsOptional() @IsString() @Length(1, 128) provider?: string;
  @IsOptional() @IsString() @Length(1, 256) model?: string;
  @IsOptional() @IsString() @Length(1, 128) request_id?: string;
  @IsOptional() @IsString() @Length(1, 128) tenant_id?: string;
  @IsOptional() @IsString() @Length(1, 128) api_key_id?: string;
  /** The usage of an External Agent session's metered adapter (the keys minted for it). */
  @IsOptional() @IsString() @Length(1, 128) agent_chat_session_id?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
}

/** `GET /hecate/v1/usage/series`: the usage filters, a bucket size and what to group by. */
export class UsageSeriesQueryDto {
  /** Default: one bucket-count back from `until` (24 hours for `hour`). */
  @IsOptional() @IsISO8601() since?: string;
  /** Default: now. */
  @IsOptional() @IsISO8601() until?: string;
  @IsOptional() @IsString() @Length(1, 128) provider?: string;
  @IsOptional() @IsString() @Length(1, 256) model?: string;
  @IsOptional() @IsString() @Length(1, 128) tenant_id?: string;
  @IsOptional() @IsString() @Length(1, 128) api_key_id?: string;
  @IsOptional() @IsIn(['minute', 'hour', 'day']) bucket?: UsageBucket;
  @IsOptional() @IsIn(['provider', 'model', 'api_key', 'tenant']) group_by?: UsageGroup;
}

export class TracesQueryDto {
  @IsOptional() @IsString() @Length(1, 128) request_id?: string;
  @IsOptional() @IsString() @Length(1, 128) tenant_id?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

/** The operator token sees every tenant (optionally narrowed by `tenant_id`); an API key only its own. */
export function tenantScope(caller: Principal, requested: string | undefined): string | null {
  if (caller.kind === 'operator' || caller.kind === 'local_operator') return requested ?? null;
  return caller.tenantId;
}

/** Calls, tokens and cost (micro-USD, and USD as a decimal string) over a set of usage rows. */
@ApiSchema({ name: 'UsageTotals' })
export class UsageTotalsDto {
  calls!: number;
  requests!: number;
  errors!: number;
  input_tokens!: number;
  output_tokens!: number;
  cached_input_tokens!: number;
  cost_micros_usd!: number;
  cost_usd!: string;
}

@ApiSchema({ name: 'UsageByModel' })
export class UsageByModelDto extends UsageTotalsDto {
  provider!: string;
  model!: string;
}

@ApiSchema({ name: 'UsageSummary' })
export class UsageSummaryDto extends UsageTotalsDto {
  tenant_id!: string | null;
  since!: string | null;
  until!: string | null;
  by_model!: UsageByModelDto[];
}

/** One upstream call in the usage ledger. */
/** One bucket of one group. */
@ApiSchema({ name: 'UsagePoint' })
export class UsagePointDto {
  /** The bucket's start (UTC). */
  at!: string;
  /** The group's value (provider, model, API key id or tenant); null for calls without one (the operator token has no key). */
  key!: string | null;
  calls!: number;
  errors!: number;
  input_tokens!: number;
  output_tokens!: number;
  cost_micros_usd!: number;
}

/** Usage over time: the buckets that have calls, in time order, one point per group. */
@ApiSchema({ name: 'UsageSeries' })
export class UsageSeriesDto {
  since!: string;
  until!: string;
  @ApiProperty({ enum: ['minute', 'hour', 'day'] })
  bucket!: UsageBucket;
  @ApiProperty({ enum: ['provider', 'model', 'api_key', 'tenant'] })
  group_by!: UsageGroup;
  points!: UsagePointDto[];
}

@ApiSchema({ name: 'UsageEvent' })
export class UsageEventDto {
  id!: string;
  tenant_id!: string;
  request_id!: string;
  trace_id!: string | null;
  api_key_id!: string | null;
  provider!: string;
  provider_kind!: string;
  model!: string;
  route_reason!: string;
  endpoint!: string;
  attempt!: number;
  status!: string;
  error_type!: string | null;
  stream!: boolean;
  input_tokens!: number;
  output_tokens!: number;
  cached_input_tokens!: number;
  cost_micros_usd!: number;
  cost_usd!: string;
  latency_ms!: number;
  first_byte_ms!: number | null;
  created_at!: string;
}

@ApiSchema({ name: 'TraceCandidate' })
export class TraceCandidateDto {
  provider!: string;
  model!: string;
  kind?: string;
  status!: TraceCandidate['status'];
  reason?: string;
  skip_reason?: string;
}

@ApiSchema({ name: 'TraceRoute' })
export class TraceRouteDto {
  reason?: string;
  requested_model?: string;
  requested_provider?: string;
  selected_provider?: string;
  selected_model?: string;
  failover!: boolean;
  fallback_from?: string;
  candidates!: TraceCandidateDto[];
}

@ApiSchema({ name: 'TraceAttempt' })
export class TraceAttemptDto {
  provider!: string;
  model!: string;
  attempt!: number;
  status!: 'ok' | 'error';
  started_at!: string;
  duration_ms!: number;
  first_byte_ms?: number;
  upstream_status?: number;
  error_type?: string;
  error?: string;
  retryable?: boolean;
}

@ApiSchema({ name: 'TraceUsage' })
export class TraceUsageDto {
  input_tokens!: number;
  output_tokens!: number;
  cached_input_tokens!: number;
}

@ApiSchema({ name: 'TraceTimings' })
export class TraceTimingsDto {
  route_ms!: number;
  first_byte_ms?: number;
  total_ms!: number;
}

@ApiSchema({ name: 'TraceSpan' })
export class TraceSpanDto {
  name!: string;
  start_ms!: number;
  duration_ms!: number;
  attributes!: Record<string, string | number | boolean>;
}

/** One gateway request as the trace inspector shows it (`GET /hecate/v1/traces?request_id=`). */
@ApiSchema({ name: 'GatewayTrace' })
export class GatewayTraceDto {
  request_id!: string;
  trace_id!: string;
  tenant_id!: string;
  endpoint!: string;
  inbound_protocol!: string;
  stream!: boolean;
  started_at!: string;
  duration_ms!: number;
  status!: 'ok' | 'error';
  error_type?: string;
  route!: TraceRouteDto;
  attempts!: TraceAttemptDto[];
  usage?: TraceUsageDto;
  cost_micros_usd?: number;
  timings!: TraceTimingsDto;
  spans!: TraceSpanDto[];
}

type _SummaryDocumented = Assert<Documents<UsageSummaryDto, Returned<UsageLedgerService['summary']>>>;
type _ByModelDocumented = Assert<Documents<UsageByModelDto, Returned<UsageLedgerService['summary']>['by_model'][number]>>;
type _SeriesDocumented = Assert<Documents<UsageSeriesDto, Returned<UsageLedgerService['series']>>>;
type _PointDocumented = Assert<Documents<UsagePointDto, Returned<UsageLedgerService['series']>['points'][number]>>;
type _EventDocumented = Assert<Documents<UsageEventDto, Returned<UsageLedgerService['events']>[number]>>;
type _TraceDocumented = Assert<Documents<GatewayTraceDto, GatewayTrace>>;
type _RouteDocumented = Assert<Documents<TraceRouteDto, GatewayTrace['route']>>;
type _CandidateDocumented = Assert<Documents<TraceCandidateDto, TraceCandidate>>;
type _AttemptDocumented = Assert<Documents<TraceAttemptDto, TraceAttempt>>;
type _SpanDocumented = Assert<Documents<TraceSpanDto, TraceSpan>>;
