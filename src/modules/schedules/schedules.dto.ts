import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import { redactMcpServers } from '@modules/mcp';
import { CreateTaskDto } from '@modules/tasks';
import type { FiringRow, FiringStatus, ScheduleRow, ScheduleStatus } from './schedules.repository';

export const CATCH_UP_POLICIES = ['skip', 'once', 'all'] as const;
export const SCHEDULE_STATUSES = ['active', 'paused', 'completed'] as const;
const NAME = /^\S(?:.*\S)?$/;

/** What each fire starts. */
export class ScheduleTargetDto {
  /** `task`: a task made from `task` and started (a saved agent: `{execution_kind: "agent_loop", agent_id, prompt}`). */
  @ApiProperty({ enum: ['task'] })
  @IsIn(['task'])
  type!: 'task';
  /** The fields of `POST /hecate/v1/tasks`; each fire creates a task from them and starts its first run. */
  @ValidateNested()
  @Type(() => CreateTaskDto)
  task!: CreateTaskDto;
}

/** The timing and policy fields (PATCH: each optional). */
class ScheduleFieldsDto {
  @IsOptional() @IsString() @MaxLength(200) @Matches(NAME, { message: 'name must not be blank or start or end with whitespace' }) name?: string;
  /** 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first); exclusive with `run_at`. */
  @IsOptional() @IsString() @MaxLength(200) cron_expression?: string;
  /** IANA time zone the cron expression is read in (default UTC); daylight-saving changes as the cron library (croner) defines them. */
  @IsOptional() @IsString() @MaxLength(100) timezone?: string;
  /** One fire at this time (ISO 8601); exclusive with `cron_expression`. */
  @IsOptional() @IsISO8601() run_at?: string;
  /** No fire before this time. */
  @IsOptional() @IsISO8601() starts_at?: string;
  /** No fire after this time: the schedule completes. */
  @IsOptional() @IsISO8601() ends_at?: string;
  /** At most this many fires in all: the schedule then completes. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) max_fires?: number;
  /** Fire times missed while no worker ran (older than GATEWAY_SCHEDULER_MISFIRE_GRACE): `skip` (default), `once` (the newest), `all` (the newest `catch_up_max`). */
  @ApiProperty({ enum: CATCH_UP_POLICIES, required: false })
  @IsOptional()
  @IsIn(CATCH_UP_POLICIES)
  catch_up?: 'skip' | 'once' | 'all';
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) catch_up_max?: number;
  /** Create it paused. */
  @IsOptional() @IsBoolean() paused?: boolean;
}

/** `POST /hecate/v1/schedules`. */
export class CreateScheduleDto extends ScheduleFieldsDto {
  @ValidateNested() @Type(() => ScheduleTargetDto) target!: ScheduleTargetDto;
}

/** `PATCH /hecate/v1/schedules/{schedule_id}`: the fields to change; `null` clears `starts_at`, `ends_at`, `max_fires`. */
export class PatchScheduleDto extends ScheduleFieldsDto {
  @IsOptional() @ValidateNested() @Type(() => ScheduleTargetDto) target?: ScheduleTargetDto;
}

export class ListSchedulesQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @ApiProperty({ enum: SCHEDULE_STATUSES, required: false })
  @IsOptional()
  @IsIn(SCHEDULE_STATUSES)
  status?: ScheduleStatus;
}

export class ListFiringsQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200) limit?: number;
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
}

class ScheduleTargetViewDto {
  @ApiProperty({ enum: ['task'] })
  type!: 'task';
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The task fields (MCP env and header values `[redacted]`).' })
  task!: Record<string, unknown>;
}

@ApiSchema({ name: 'Schedule' })
export class ScheduleResponseDto {
  id!: string;
  name!: string;
  @ApiProperty({ enum: ['cron', 'once'] })
  kind!: 'cron' | 'once';
  cron_expression!: string | null;
  timezone!: string;
  run_at!: string | null;
  starts_at!: string | null;
  ends_at!: string | null;
  max_fires!: number | null;
  @ApiProperty({ enum: CATCH_UP_POLICIES })
  catch_up!: 'skip' | 'once' | 'all';
  catch_up_max!: number;
  target!: ScheduleTargetViewDto;
  @ApiProperty({ enum: SCHEDULE_STATUSES })
  status!: ScheduleStatus;
  /** The next fire time (null when paused or completed). */
  next_fire_at!: string | null;
  /** The next fire times (up to 5), as they stand now. */
  next_fire_times!: string[];
  fire_count!: number;
  /** Who created it (`api_key:<id>` or the operator). */
  created_by!: string;
  created_at!: string;
  updated_at!: string;
}

/** A refused fire's error envelope (as the API would have answered the task's creation or start), or the missed fire times' note. */
@ApiSchema({ name: 'ScheduleFiringError' })
class FiringErrorDto {
  type!: string;
  message!: string;
  [detail: string]: unknown;
}

@ApiSchema({ name: 'ScheduleFiring' })
export class ScheduleFiringResponseDto {
  id!: string;
  schedule_id!: string;
  /** The fire time this firing is for. */
  scheduled_for!: string;
  /** `pending` (a worker is starting it), `fired` (the task and run it started), `skipped` (missed fire times passed over), `failed`. */
  @ApiProperty({ enum: ['pending', 'fired', 'skipped', 'failed'] })
  status!: FiringStatus;
  task_id!: string | null;
  run_id!: string | null;
  error!: FiringErrorDto | null;
  /** Workers that took it on (more than 1: a worker died or stalled holding it). */
  attempts!: number;
  created_at!: string;
  finished_at!: string | null;
}

@ApiSchema({ name: 'ScheduleDeleted' })
export class ScheduleDeletedDto {
  id!: string;
  deleted!: boolean;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export const toScheduleResponse = (s: ScheduleRow, next: Date[]) => ({
  id: s.id,
  name: s.name,
  kind: s.kind,
  cron_expression: s.cron_expression,
  timezone: s.timezone,
  run_at: iso(s.run_at),
  starts_at: iso(s.starts_at),
  ends_at: iso(s.ends_at),
  max_fires: s.max_fires,
  catch_up: s.catch_up,
  catch_up_max: s.catch_up_max,
  // env and header values may be literal secrets: never echoed (docs/design.md §4.8), as on tasks and agents.
  target: { type: s.target.type, task: { ...s.target.task, mcp_servers: redactMcpServers((s.target.task.mcp_servers as Record<string, unknown>[]) ?? []) } },
  status: s.status,
  next_fire_at: iso(s.next_fire_at),
  next_fire_times: next.map((d) => d.toISOString()),
  fire_count: s.fire_count,
  created_by: s.created_by,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

export const toFiringResponse = (f: FiringRow) => ({
  id: f.id,
  schedule_id: f.schedule_id,
  scheduled_for: f.scheduled_for.toISOString(),
  status: f.status,
  task_id: f.task_id,
  run_id: f.run_id,
  error: f.error,
  attempts: f.attempts,
  created_at: f.created_at.toISOString(),
  finished_at: iso(f.finished_at),
});

type _ScheduleDocumented = Assert<Documents<ScheduleResponseDto, ReturnType<typeof toScheduleResponse>>>;
type _FiringDocumented = Assert<Documents<ScheduleFiringResponseDto, ReturnType<typeof toFiringResponse>>>;
