import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { Origin } from '@core/http/origin.decorator';
import { AgentLoopRunsService } from './agent-loop-runs.service';

export class ContinueRunDto {
  @IsOptional() @IsString() @MaxLength(200_000) prompt?: string;
}

export class RetryFromTurnDto {
  @Type(() => Number) @IsInt() @Min(1) turn!: number;
  @IsOptional() @IsString() @MaxLength(4000) reason?: string;
}

/** The agent loop's own run operations (seed 003 "Continue" and "Retry-from-turn-N" semantics). */
@Controller('hecate/v1/tasks/:id/runs')
export class AgentLoopRunsController {
  constructor(private readonly runs: AgentLoopRunsService) {}

  @Post(':runId/continue')
  @HttpCode(200)
  async continue(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('id') id: string,
    @Param('runId') runId: string,
    @Body() dto: ContinueRunDto,
  ) {
    return { object: 'task_run', data: await this.runs.continue(p.tenantId, id, runId, dto.prompt ?? '', origin) };
  }

  @Post(':runId/retry-from-turn')
  @HttpCode(200)
  async retryFromTurn(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('id') id: string,
    @Param('runId') runId: string,
    @Body() dto: RetryFromTurnDto,
  ) {
    return { object: 'task_run', data: await this.runs.retryFromTurn(p.tenantId, id, runId, dto.turn, dto.reason ?? '', origin) };
  }
}
