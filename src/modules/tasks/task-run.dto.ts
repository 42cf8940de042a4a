import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import type { RunStatus } from './run-status';
import type { PatchMetadata, TaskArtifactEntity } from './task-artifact.entity';
import type { TaskRunEntity } from './task-run.entity';
import type { StepStatus, TaskStepEntity } from './task-step.entity';

export class RunReasonDto {
  @IsOptional() @IsString() @MaxLength(4000) reason?: string;
}

/** `POST …/runs/{run_id}/events` appends an `external.event`. */
export class AppendRunEventDto {
  @IsOptional() @Matches(/^external\.event$/, { message: 'type must be external.event' }) type?: string;
  @IsOptional() @IsString() @MaxLength(200) step_id?: string;
  @IsOptional() @IsString() @MaxLength(64) status?: string;
  @IsOptional() @IsString() @MaxLength(8000) note?: string;
  @IsOptional() @IsObject() data?: Record<string, unknown>;
}

export class RunEventsQueryDto {
  @IsOptional() @IsString() after_sequence?: string;
  @IsOptional() @Matches(/^\d{1,4}$/, { message: 'limit must be an integer' }) limit?: string;
}

/** Where a resumed or continued run picks up (docs/api.md §4 `checkpoint`). */
@ApiSchema({ name: 'TaskRunCheckpoint' })
export class RunCheckpointDto {
  source_run_id!: string;
  last_completed_step_id!: string | null;
  last_completed_step_index!: number | null;
  last_event_sequence!: number;
  reason!: string;
  /** Trigger-specific input (a continue prompt, a retry-from-turn index). */
  input?: Record<string, unknown>;
}

@ApiSchema({ name: 'TaskRun' })
export class TaskRunResponseDto {
  id!: string;
  task_id!: string;
  number!: number;
  status!: RunStatus;
  execution_kind!: string;
  model?: string;
  provider?: string;
  provider_kind?: string;
  workspace_mode?: string;
  workspace_path?: string;
  total_cost_micros_usd!: number;
  prior_cost_micros_usd!: number;
  last_error?: string;
  error_kind?: string;
  attempts!: number;
  resumed_from_run_id?: string;
  checkpoint?: RunCheckpointDto;
  request_id?: string;
  trace_id?: string;
  queued_at?: string;
  started_at?: string;
  finished_at?: string;
  created_at!: string;
  updated_at!: string;
}

@ApiSchema({ name: 'TaskStep' })
export class TaskStepResponseDto {
  id!: string;
  task_id!: string;
  run_id!: string;
  index!: number;
  kind!: string;
  title?: string;
  status!: StepStatus;
  phase?: string;
  result?: string;
  tool_name?: string;
  /** What the step ran (argv, cwd, env keys; a tool's arguments). */
  input!: Record<string, unknown>;
  output_summary!: Record<string, unknown>;
  exit_code?: number;
  error?: string;
  error_kind?: string;
  approval_id?: string;
  started_at?: string;
  finished_at?: string;
}

@ApiSchema({ name: 'TaskArtifact' })
export class TaskArtifactResponseDto {
  id!: string;
  task_id!: string;
  run_id!: string;
  step_id?: string;
  kind!: string;
  name?: string;
  description?: string;
  mime_type?: string;
  @ApiProperty({ enum: ['inline'] })
  storage_kind!: string;
  path?: string;
  /** Present on single-artifact reads and patches; lists leave it out. */
  content_text?: string;
  size_bytes!: number;
  sha256?: string;
  truncated?: boolean;
  status?: string;
  created_at!: string;
}

/** Patch review projection (docs/api.md §4 `patches`). */
@ApiSchema({ name: 'TaskPatch' })
export class TaskPatchResponseDto {
  artifact!: TaskArtifactResponseDto;
  /** The unified diff. */
  diff!: string;
  status!: string;
  path!: string;
  operation!: PatchMetadata['operation'];
  before_existed!: boolean;
}

const iso = (d: Date | null | undefined): string | undefined => (d ? d.toISOString() : undefined);
const opt = (s: string): string | undefined => (s ? s : undefined);

export const toRunResponse = (r: TaskRunEntity) => ({
  id: r.id,
  task_id: r.taskId,
  number: r.number,
  status: r.status,
  execution_kind: r.executionKind,
  model: opt(r.model),
  provider: opt(r.provider),
  provider_kind: opt(r.providerKind),
  workspace_mode: opt(r.workspaceMode),
  workspace_path: opt(r.workspacePath),
  total_cost_micros_usd: Number(r.totalCostMicrosUsd),
  prior_cost_micros_usd: Number(r.priorCostMicrosUsd),
  last_error: opt(r.lastError),
  error_kind: opt(r.errorKind),
  attempts: r.attempts,
  resumed_from_run_id: r.resumedFromRunId ?? undefined,
  checkpoint: r.checkpoint ?? undefined,
  request_id: r.requestId ?? undefined,
  trace_id: r.traceId ?? undefined,
  queued_at: iso(r.queuedAt),
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

export const toStepResponse = (s: TaskStepEntity) => ({
  id: s.id,
  task_id: s.taskId,
  run_id: s.runId,
  index: s.index,
  kind: s.kind,
  title: opt(s.title),
  status: s.status,
  phase: opt(s.phase),
  result: opt(s.result),
  tool_name: opt(s.toolName),
  input: s.input,
  output_summary: s.outputSummary,
  exit_code: s.exitCode ?? undefined,
  error: opt(s.error),
  error_kind: opt(s.errorKind),
  approval_id: s.approvalId ?? undefined,
  started_at: iso(s.startedAt),
  finished_at: iso(s.finishedAt),
});

export const toArtifactResponse = (a: TaskArtifactEntity) => ({
  id: a.id,
  task_id: a.taskId,
  run_id: a.runId,
  step_id: a.stepId ?? undefined,
  kind: a.kind,
  name: opt(a.name),
  description: opt(a.description),
  mime_type: opt(a.mimeType),
  storage_kind: 'inline',
  path: opt(a.path),
  content_text: a.contentText === undefined ? undefined : a.contentText,
  size_bytes: Number(a.sizeBytes),
  sha256: opt(a.sha256),
  truncated: a.truncated || undefined,
  status: opt(a.status),
  created_at: a.createdAt.toISOString(),
});

/** Patch review projection (docs/api.md §4 `patches`): the artifact, its unified diff, status and path. */
export const toPatchResponse = (a: TaskArtifactEntity) => {
  const meta = a.metadata as unknown as PatchMetadata;
  return {
    artifact: toArtifactResponse(a),
    diff: a.contentText,
    status: a.status,
    path: meta.path,
    operation: meta.operation,
    before_existed: meta.before_existed,
  };
};

type _RunDocumented = Assert<Documents<TaskRunResponseDto, ReturnType<typeof toRunResponse>>>;
type _CheckpointDocumented = Assert<Documents<RunCheckpointDto, NonNullable<TaskRunEntity['checkpoint']>>>;
type _StepDocumented = Assert<Documents<TaskStepResponseDto, ReturnType<typeof toStepResponse>>>;
type _ArtifactDocumented = Assert<Documents<TaskArtifactResponseDto, ReturnType<typeof toArtifactResponse>>>;
type _PatchDocumented = Assert<Documents<TaskPatchResponseDto, ReturnType<typeof toPatchResponse>>>;
