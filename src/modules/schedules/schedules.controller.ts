import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import {
  CreateScheduleDto,
  ListFiringsQueryDto,
  ListSchedulesQueryDto,
  PatchScheduleDto,
  ScheduleDeletedDto,
  ScheduleFiringResponseDto,
  ScheduleResponseDto,
} from './schedules.dto';
import { SchedulesService } from './schedules.service';

const PAGE = { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' } };

/** Schedules (docs/schedules.md): tenant-scoped like tasks and saved agents. */
@Controller('hecate/v1/schedules')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @ApiEnvelope('schedule', ScheduleResponseDto)
  @ApiOperation({ summary: 'Create a schedule' })
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateScheduleDto) {
    return { object: 'schedule', data: await this.schedules.create(p, dto) };
  }

  @ApiEnvelope('schedules', [ScheduleResponseDto], { extra: PAGE })
  @ApiOperation({ summary: 'List the schedules' })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListSchedulesQueryDto) {
    return { object: 'schedules', ...(await this.schedules.list(p.tenantId, q)) };
  }

  @ApiEnvelope('schedule', ScheduleResponseDto)
  @ApiOperation({ summary: 'Get a schedule, with its next fire times' })
  @Get(':schedule_id')
  async get(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string) {
    return { object: 'schedule', data: await this.schedules.get(p.tenantId, id) };
  }

  @ApiEnvelope('schedule', ScheduleResponseDto)
  @ApiOperation({ summary: "Update a schedule's fields" })
  @Patch(':schedule_id')
  async patch(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string, @Body() dto: PatchScheduleDto) {
    return { object: 'schedule', data: await this.schedules.update(p, id, dto) };
  }

  @ApiEnvelope('schedule_deleted', ScheduleDeletedDto)
  @ApiOperation({ summary: 'Delete a schedule and its firing history' })
  @Delete(':schedule_id')
  async delete(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string) {
    return { object: 'schedule_deleted', data: await this.schedules.delete(p.tenantId, id) };
  }

  @ApiEnvelope('schedule', ScheduleResponseDto)
  @ApiOperation({ summary: 'Pause a schedule' })
  @Post(':schedule_id/pause')
  @HttpCode(200)
  async pause(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string) {
    return { object: 'schedule', data: await this.schedules.setPaused(p.tenantId, id, true) };
  }

  @ApiEnvelope('schedule', ScheduleResponseDto)
  @ApiOperation({ summary: 'Resume a paused schedule (from its next fire time after now)' })
  @Post(':schedule_id/resume')
  @HttpCode(200)
  async resume(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string) {
    return { object: 'schedule', data: await this.schedules.setPaused(p.tenantId, id, false) };
  }

  @ApiEnvelope('schedule_firings', [ScheduleFiringResponseDto], { extra: PAGE })
  @ApiOperation({ summary: "List a schedule's firings" })
  @Get(':schedule_id/firings')
  async firings(@CurrentPrincipal() p: Principal, @Param('schedule_id') id: string, @Query() q: ListFiringsQueryDto) {
    return { object: 'schedule_firings', ...(await this.schedules.firings(p.tenantId, id, q)) };
  }
}
