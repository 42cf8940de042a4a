import { Controller, Get } from '@nestjs/common';
import { HealthService } from './health.service';

@Controller('hecate/v1/system')
export class SystemController {
  constructor(private readonly health: HealthService) {}

  @Get('stats')
  async stats() {
    return { object: 'system_stats', data: await this.health.stats() };
  }
}
