import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TaskApprovalResponseDto } from '@modules/approvals';
import { EventEnvelopeDto } from '@modules/events';
import { TaskArtifactResponseDto, TaskRunResponseDto, TaskStepResponseDto } from './task-run.dto';

const ACTIVITY_TYPES = ['thinking', 'tool_call', 'patch', 'changed_files', 'final_answer', 'approval', 'run_result', 'step', 'artifact'] as const;

/** One item of a run's compact timeline (docs/api.md §4 `activity`), as buildActivity (run-activity.ts) makes it. */
@ApiSchema({ name: 'TaskRunActivity' })
export class RunActivityItemDto {
  id!: string;
  @ApiProperty({ enum: ACTIVITY_TYPES })
  type!: (typeof ACTIVITY_TYPES)[number];
  status?: string;
  title?: string;
  step_id?: string;
  artifact_id?: string;
  approval_id?: string;
  tool_name?: string;
  kind?: string;
  path?: string;
  summary?: Record<string, unknown>;
  occurred_at?: string;
  terminal?: boolean;
  needs_action?: boolean;
}

/**
 * `data` of a run stream frame (`{object: "task_run_stream_event", data}`): the event and the run's state after it.
 * The closing `done` frame of a stream that resumed after the end carries the state only (no `event`).
 */
@ApiSchema({ name: 'TaskRunStreamEvent' })
export class RunStreamEventDto {
  sequence!: number;
  event_type?: string;
  terminal!: boolean;
  event?: EventEnvelopeDto;
  run!: TaskRunResponseDto;
  steps!: TaskStepResponseDto[];
  artifacts!: TaskArtifactResponseDto[];
  approvals!: TaskApprovalResponseDto[];
  activity!: RunActivityItemDto[];
}
