import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import { redactMcpServers } from '@modules/mcp';
import { CreateTaskDto } from '@modules/tasks';
import type { FiringRow, FiringStatus, ScheduleRow, ScheduleStatus, ScheduleTarget } from './schedules.repository';

export const CATCH_UP_POLICIES = ['skip', 'once', 'all'] as const;
export const TARGET_TYPES = ['task', 'agent_chat_message'] as const;
export const SCHEDULE_STATUSES = ['active', 'paused', 'completed'] as const;
const NAME = /^\S(?:.*\S)?$/;

/** What each fire does. */
export class ScheduleTargetDto {
  /** `task`: a task made from `task` and started. `agent_chat_message`: `content` queued into the Agent Chat session `session_id` (its next turn once it is idle). */
  @ApiProperty({ enum: TARGET_TYPES })
  @IsIn(TARGET_TYPES)
  type!: (typeof TARGET_TYPES)[number];
  /** `task`: the fields of `POST /hecate/v1/tasks` (a saved agent: `{execution_kind: "agent_loop", agent_id, prompt}`). */
  @ValidateIf((o: ScheduleTargetDto) => o.type === 'task')
  @IsDefined()
  @ValidateNested()
  @Type(() => CreateTaskDto)
  task?: CreateTaskDto;
  @ValidateIf((o: ScheduleTargetDto) => o.type === 'agent_chat_message')
  @IsString()
  @MaxLength(200)
  session_id?: string;
  @ValidateIf((o: ScheduleTargetDto) => o.type === 'agent_chat_message')
  @IsString()
  @MaxLength(1_000_000)
  content?: string;
  /** `agent_chat_message`: the turn's runtime, provider and model (default: the session's). */
  @IsOptional() @IsString() @MaxLength(50) runtime_kind?: string;
  @IsOptional() @IsString() @MaxLength(200) provider?: string;
  @IsOptional() @IsString() @MaxLength(400) model?: string;
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
  @ApiProperty({ enum: TARGET_TYPES })
  type!: (typeof TARGET_TYPES)[number];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`task`: the task fields (MCP env and header values `[redacted]`).' })
  task?: Record<string, unknown>;
  session_id?: string;
  content?: string;
  runtime_kind?: string;
  provider?: string;
  model?: string;
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
  /** `task` targets: the task the fire created and its run. */
  task_id!: string | null;
  run_id!: string | null;
  /** `agent_chat_message` targets: the session, the queued item the fire made, and the turn it started (null until it starts). */
  session_id!: string | null;
  queue_item_id!: string | null;
  turn_id!: string | null;
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

function targetView(t: ScheduleTarget): ScheduleTargetViewDto {
  if (t.type === 'agent_chat_message') return t;
  // env and header values may be literal secrets: never echoed (docs/design.md §4.8), as on tasks and agents.
  return { type: t.type, task: { ...t.task, mcp_servers: redactMcpServers((t.task.mcp_servers as Record<string, unknown>[]) ?? []) } };
}

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
  target: targetView(s.target),
  status: s.status,
  next_fire_at: iso(s.next_fire_at),
  next_fire_times: next.map((d) => d.toISOString()),
  fire_count: s.fire_count,
  created_by: s.created_by,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

/** `turnId`: the turn an Agent Chat firing's queued item started (read from the queue). */
export const toFiringResponse = (f: FiringRow, turnId: string | null = null) => ({
  id: f.id,
  schedule_id: f.schedule_id,
  scheduled_for: f.scheduled_for.toISOString(),
  status: f.status,
  task_id: f.task_id,
  run_id: f.run_id,
  session_id: f.session_id,
  queue_item_id: f.queue_item_id,
  turn_id: turnId,
  error: f.error,
  attempts: f.attempts,
  created_at: f.created_at.toISOString(),
  finished_at: iso(f.finished_at),
});

type _ScheduleDocumented = Assert<Documents<ScheduleResponseDto, ReturnType<typeof toScheduleResponse>>>;
type _FiringDocumented = Assert<Documents<ScheduleFiringResponseDto, ReturnType<typeof toFiringResponse>>>;
