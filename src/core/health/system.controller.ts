import { Controller, Get } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ApiEnvelope } from '@core/http/openapi';
import { HealthService } from './health.service';
import { SystemStatsDto } from './system-stats.dto';

@Controller('hecate/v1/system')
export class SystemController {
  constructor(private readonly health: HealthService) {}

  @ApiEnvelope('system_stats', SystemStatsDto)
  @ApiOperation({ summary: 'Get system stats' })
  @Get('stats')
  async stats() {
    return { object: 'system_stats', data: await this.health.stats() };
  }
}
