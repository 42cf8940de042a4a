import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import { formatUsd } from '@core/money';
import { BUDGET_PERIODS, type BudgetPeriod, resetsAt } from './budget-periods';
import { BUDGET_SCOPES, type BudgetRow, type BudgetScope, type WindowRow } from './budgets.repository';

const NAME = /^\S(?:.*\S)?$/;
const TENANT = /^[A-Za-z0-9._-]{1,64}$/;
/** 10^15 micro-USD (a billion dollars): far past any real limit, well inside bigint and a double's exact integers. */
const MAX_LIMIT = 1e15;

class BudgetFieldsDto {
  @IsOptional() @IsString() @MaxLength(200) @Matches(NAME, { message: 'name must not be blank or start or end with whitespace' }) name?: string;
  /** Percentages of the limit (1–99) at which `budget.threshold_reached` goes on the feed, once per period; reaching the limit itself emits `budget.exhausted`. */
  @IsOptional() @IsArray() @ArrayMaxSize(10) @ArrayUnique() @IsInt({ each: true }) @Min(1, { each: true }) @Max(99, { each: true }) thresholds?: number[];
}

/** `POST /hecate/v1/budgets`. */
export class CreateBudgetDto extends BudgetFieldsDto {
  /** `tenant`: every model call of the tenant; `api_key`: calls made with the key or by work it started (tasks, Agent Chat sessions, schedules); `agent`: calls of the saved agent's runs and sessions. */
  @ApiProperty({ enum: BUDGET_SCOPES })
  @IsIn(BUDGET_SCOPES)
  scope!: BudgetScope;
  /** The API key's id (`scope: api_key`) or the saved agent's id (`scope: agent`); absent for `tenant`. */
  @IsOptional() @IsString() @MaxLength(200) subject_id?: string;
  /** `day`, `week` (from Monday) and `month` are UTC calendar periods; `total` never resets. */
  @ApiProperty({ enum: BUDGET_PERIODS })
  @IsIn(BUDGET_PERIODS)
  period!: BudgetPeriod;
  /** The most the period's model calls may cost, in micro-USD (the usage ledger's cost). */
  @Type(() => Number) @IsInt() @Min(1) @Max(MAX_LIMIT) limit_micros_usd!: number;
  /** Another tenant's budget: the operator token only. */
  @IsOptional() @IsString() @Matches(TENANT) tenant_id?: string;
}

/** `PATCH /hecate/v1/budgets/{budget_id}`: the name, limit or thresholds (scope, subject and period are fixed). */
export class PatchBudgetDto extends BudgetFieldsDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_LIMIT) limit_micros_usd?: number;
}

export class ListBudgetsQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @ApiProperty({ enum: BUDGET_SCOPES, required: false })
  @IsOptional()
  @IsIn(BUDGET_SCOPES)
  scope?: BudgetScope;
  @IsOptional() @IsString() @MaxLength(200) subject_id?: string;
  /** Another tenant's budgets: the operator token only. */
  @IsOptional() @IsString() @Matches(TENANT) tenant_id?: string;
}

export class BudgetTenantQueryDto {
  /** Another tenant's budget: the operator token only. */
  @IsOptional() @IsString() @Matches(TENANT) tenant_id?: string;
}

@ApiSchema({ name: 'BudgetWindow' })
class BudgetWindowDto {
  window_start!: string;
  /** When a new window (spent 0) begins; null for a `total` budget. */
  resets_at!: string | null;
  /** The settled cost of this window's model calls (the usage ledger's). */
  spent_micros_usd!: number;
  spent_usd!: string;
  /** The worst case of calls in flight now (released into `spent` as each ends). */
  reserved_micros_usd!: number;
  /** The limit less what is spent (0 once spent; a call in flight may still end up to its own cost over). */
  remaining_micros_usd!: number;
  remaining_usd!: string;
  /** Model calls let in this window. */
  calls!: number;
  /** Thresholds (percent) reached this window; 100: exhausted. */
  thresholds_reached!: number[];
}

@ApiSchema({ name: 'Budget' })
export class BudgetResponseDto {
  id!: string;
  tenant_id!: string;
  name!: string;
  @ApiProperty({ enum: BUDGET_SCOPES })
  scope!: BudgetScope;
  subject_id!: string | null;
  @ApiProperty({ enum: BUDGET_PERIODS })
  period!: BudgetPeriod;
  limit_micros_usd!: number;
  limit_usd!: string;
  thresholds!: number[];
  current!: BudgetWindowDto;
  created_by!: string;
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'BudgetDeleted' })
export class BudgetDeletedDto {
  id!: string;
  deleted!: boolean;
}

export const toBudgetResponse = (b: BudgetRow, start: Date, w: WindowRow | undefined) => {
  const limit = Number(b.limit_micros_usd);
  const spent = Number(w?.spent_micros_usd ?? 0);
  const remaining = Math.max(0, limit - spent);
  return {
    id: b.id,
    tenant_id: b.tenant_id,
    name: b.name,
    scope: b.scope,
    subject_id: b.subject_id || null,
    period: b.period,
    limit_micros_usd: limit,
    limit_usd: formatUsd(limit),
    thresholds: [...b.thresholds].sort((x, y) => x - y),
    current: {
      window_start: start.toISOString(),
      resets_at: resetsAt(b.period, start)?.toISOString() ?? null,
      spent_micros_usd: spent,
      spent_usd: formatUsd(spent),
      reserved_micros_usd: Number(w?.reserved_micros_usd ?? 0),
      remaining_micros_usd: remaining,
      remaining_usd: formatUsd(remaining),
      calls: Number(w?.calls ?? 0),
      thresholds_reached: [...(w?.thresholds_reached ?? [])].sort((x, y) => x - y),
    },
    created_by: b.created_by,
    created_at: b.created_at.toISOString(),
    updated_at: b.updated_at.toISOString(),
  };
};

type _BudgetDocumented = Assert<Documents<BudgetResponseDto, ReturnType<typeof toBudgetResponse>>>;
