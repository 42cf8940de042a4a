import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { Origin } from '@core/http/origin.decorator';
import { ApiEnvelope, ApiSse } from '@core/http/openapi';
import { SseService } from '@core/http/sse';
import { EventEnvelopeDto, parseCursor } from '@modules/events';
import { PatchesService } from './patches.service';
import { RunAttemptsService } from './run-attempts.service';
import { RunInterventionsService } from './run-interventions.service';
import { RunQueriesService } from './run-queries.service';
import { RunStreamService } from './run-stream.service';
import { RunStreamEventDto } from './run-stream.dto';
import {
  AppendRunEventDto,
  RunEventsQueryDto,
  RunReasonDto,
  TaskArtifactResponseDto,
  TaskPatchResponseDto,
  TaskRunResponseDto,
  TaskStepResponseDto,
} from './task-run.dto';

/** Runs of a task: operations, detail endpoints, patches, events and the run stream (docs/api.md §4). */
@Controller('hecate/v1/tasks/:task_id/runs')
export class TaskRunsController {
  constructor(
    private readonly attempts: RunAttemptsService,
    private readonly interventions: RunInterventionsService,
    private readonly queries: RunQueriesService,
    private readonly patches: PatchesService,
    private readonly stream: RunStreamService,
    private readonly sse: SseService,
  ) {}

  @ApiEnvelope('task_runs', [TaskRunResponseDto])
  @ApiOperation({ summary: "List a task's runs" })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Param('task_id') id: string) {
    return { object: 'task_runs', data: await this.queries.listRuns(p.tenantId, id) };
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Get a run' })
  @Get(':run_id')
  async get(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string) {
    return { object: 'task_run', data: await this.queries.getRun(p.tenantId, id, runId) };
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Retry a run' })
  @Post(':run_id/retry')
  @HttpCode(200)
  async retry(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: RunReasonDto,
  ) {
    return { object: 'task_run', data: await this.attempts.retry(p.tenantId, id, runId, dto.reason ?? '', origin) };
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Resume a run' })
  @Post(':run_id/resume')
  @HttpCode(200)
  async resume(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: RunReasonDto,
  ) {
    return { object: 'task_run', data: await this.attempts.resume(p.tenantId, id, runId, dto.reason ?? '', origin) };
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Cancel a run' })
  @Post(':run_id/cancel')
  @HttpCode(200)
  async cancel(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: RunReasonDto,
  ) {
    return { object: 'task_run', data: await this.interventions.cancel(p.tenantId, id, runId, dto.reason ?? '', origin) };
  }

  @ApiEnvelope('task_steps', [TaskStepResponseDto])
  @ApiOperation({ summary: "List a run's steps" })
  @Get(':run_id/steps')
  async steps(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string) {
    return { object: 'task_steps', data: await this.queries.listSteps(p.tenantId, id, runId) };
  }

  @ApiEnvelope('task_step', TaskStepResponseDto)
  @ApiOperation({ summary: 'Get a run step' })
  @Get(':run_id/steps/:step_id')
  async step(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string, @Param('step_id') stepId: string) {
    return { object: 'task_step', data: await this.queries.getStep(p.tenantId, id, runId, stepId) };
  }

  @ApiEnvelope('task_artifacts', [TaskArtifactResponseDto])
  @ApiOperation({ summary: "List a run's artifacts" })
  @Get(':run_id/artifacts')
  async artifacts(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string) {
    return { object: 'task_artifacts', data: await this.queries.listArtifacts(p.tenantId, id, runId) };
  }

  @ApiEnvelope('task_artifact', TaskArtifactResponseDto)
  @ApiOperation({ summary: 'Get a run artifact' })
  @Get(':run_id/artifacts/:artifact_id')
  async artifact(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string, @Param('artifact_id') artifactId: string) {
    return { object: 'task_artifact', data: await this.queries.getArtifact(p.tenantId, id, runId, artifactId) };
  }

  @ApiEnvelope('task_patches', [TaskPatchResponseDto])
  @ApiOperation({ summary: "List a run's patches" })
  @Get(':run_id/patches')
  async patchesList(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string) {
    return { object: 'task_patches', data: await this.queries.listPatches(p.tenantId, id, runId) };
  }

  @ApiEnvelope('task_patch', TaskPatchResponseDto)
  @ApiOperation({ summary: 'Get a patch' })
  @Get(':run_id/patches/:artifact_id')
  async patch(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string, @Param('artifact_id') artifactId: string) {
    return { object: 'task_patch', data: await this.queries.getPatch(p.tenantId, id, runId, artifactId) };
  }

  @ApiEnvelope('task_patch', TaskPatchResponseDto)
  @ApiOperation({ summary: 'Apply a patch' })
  @Post(':run_id/patches/:artifact_id/apply')
  @HttpCode(200)
  async apply(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Param('artifact_id') artifactId: string,
  ) {
    return { object: 'task_patch', data: await this.patches.apply(p.tenantId, id, runId, artifactId, origin) };
  }

  @ApiEnvelope('task_patch', TaskPatchResponseDto)
  @ApiOperation({ summary: 'Revert a patch' })
  @Post(':run_id/patches/:artifact_id/revert')
  @HttpCode(200)
  async revert(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Param('artifact_id') artifactId: string,
  ) {
    return { object: 'task_patch', data: await this.patches.revert(p.tenantId, id, runId, artifactId, origin) };
  }

  @ApiEnvelope('task_run_events', [EventEnvelopeDto])
  @ApiOperation({ summary: "List a run's events" })
  @Get(':run_id/events')
  async events(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('run_id') runId: string, @Query() q: RunEventsQueryDto) {
    const after = parseCursor(q.after_sequence, 'after_sequence') ?? 0;
    return { object: 'task_run_events', data: await this.queries.listEvents(p.tenantId, id, runId, after, q.limit ? Number(q.limit) : 500) };
  }

  @ApiEnvelope('task_run_event', EventEnvelopeDto)
  @ApiOperation({ summary: 'Append an event to a run' })
  @Post(':run_id/events')
  @HttpCode(200)
  async appendEvent(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: AppendRunEventDto,
  ) {
    return { object: 'task_run_event', data: await this.queries.appendExternal(p.tenantId, id, runId, dto, origin) };
  }

  /** `after_sequence` wins over `Last-Event-ID` (the reference's rule for the run stream). */
  @ApiSse(
    'One `snapshot` frame per event (`id:` = sequence) after the cursor, then `done` after the terminal event.',
    {
      snapshot: ['task_run_stream_event', RunStreamEventDto],
      done: ['task_run_stream_event', RunStreamEventDto],
    },
    { lastEventId: 'The last `sequence` received; `after_sequence` wins over it.' },
  )
  @ApiOperation({ summary: "Stream a run's events" })
  @Get(':run_id/stream')
  async streamRun(
    @CurrentPrincipal() p: Principal,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Query() q: RunEventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const after = parseCursor(q.after_sequence, 'after_sequence') ?? parseCursor(lastEventId, 'Last-Event-ID') ?? 0;
    await this.stream.serve(this.sse.opener(reply, { stream: 'run_events' }), p.tenantId, id, runId, after);
  }
}
