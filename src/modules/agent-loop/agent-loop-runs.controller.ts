import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { Origin } from '@core/http/origin.decorator';
import { ApiEnvelope, ApiSse } from '@core/http/openapi';
import { SseService } from '@core/http/sse';
import { LiveDeltaFrameDto, LiveResetFrameDto, ToolProgressFrameDto } from '@modules/inference';
import { TaskRunResponseDto } from '@modules/tasks';
import { AgentLoopRunsService } from './agent-loop-runs.service';
import { ContinueRunDto, LiveDoneFrameDto, LiveQueryDto, RetryFromTurnDto } from './agent-loop-runs.dto';

/** The agent loop's own run operations (docs/api.md §4 "Continue" and "Retry-from-turn-N" semantics). */
@Controller('hecate/v1/tasks/:task_id/runs')
export class AgentLoopRunsController {
  constructor(
    private readonly runs: AgentLoopRunsService,
    private readonly sse: SseService,
  ) {}

  /** The run's live stream: model deltas and tool_progress frames, resumable by index (`?after=` or `Last-Event-ID`). */
  @ApiSse(
    'Model deltas, tool progress and `approval.requested` / `approval.resolved` (the Agent Chat frames) of an agent_loop run (`id:` = index), `reset` when a model call is made again after a takeover, then `done`.',
    { delta: LiveDeltaFrameDto, tool_progress: ToolProgressFrameDto, reset: LiveResetFrameDto, done: LiveDoneFrameDto },
    { lastEventId: 'The last index received (`?after=` does the same).' },
  )
  @ApiOperation({ summary: "Stream an agent run's live output" })
  @Get(':run_id/live')
  async live(
    @CurrentPrincipal() p: Principal,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Query() q: LiveQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const fromHeader = lastEventId && /^\d+$/.test(lastEventId) ? Number(lastEventId) : 0;
    await this.runs.serveLive(this.sse.opener(reply, { stream: 'run_live' }), p.tenantId, id, runId, q.after ?? fromHeader);
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Continue an agent run with a prompt' })
  @Post(':run_id/continue')
  @HttpCode(200)
  async continue(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: ContinueRunDto,
  ) {
    return { object: 'task_run', data: await this.runs.continue(p.tenantId, id, runId, dto.prompt ?? '', origin) };
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: 'Retry an agent run from a turn' })
  @Post(':run_id/retry-from-turn')
  @HttpCode(200)
  async retryFromTurn(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('run_id') runId: string,
    @Body() dto: RetryFromTurnDto,
  ) {
    return { object: 'task_run', data: await this.runs.retryFromTurn(p.tenantId, id, runId, dto.turn, dto.reason ?? '', origin) };
  }
}
