import { Body, Controller, Get, HttpCode, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { ApiEnvelope } from '@core/http/openapi';
import { CreateQueueProbeDto, QueueProbeResponseDto } from './queue-probe.dto';
import { QueueProbeService } from './queue-probe.service';

/** A system operation (a job through the system queue): `admin`. */
@Controller('hecate/v1/system/queue-probes')
@RequireScope('admin')
export class QueueProbesController {
  constructor(private readonly probes: QueueProbeService) {}

  @ApiEnvelope('queue_probe', QueueProbeResponseDto)
  @ApiOperation({ summary: 'Start a queue probe' })
  @Post()
  @HttpCode(202)
  async create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateQueueProbeDto) {
    return { object: 'queue_probe', data: await this.probes.create(caller.tenantId, dto) };
  }

  @ApiEnvelope('queue_probe', QueueProbeResponseDto)
  @ApiOperation({ summary: "Get a queue probe's result" })
  @Get(':probe_id')
  async get(@CurrentPrincipal() caller: Principal, @Param('probe_id', new ParseUUIDPipe()) id: string) {
    return { object: 'queue_probe', data: await this.probes.get(caller.tenantId, id) };
  }
}
