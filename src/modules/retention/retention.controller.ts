import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { RetentionRunDto } from './retention.dto';
import { RetentionService } from './retention.service';

/** Retention history and manual sweep (inventory §1.6 `/system/retention/runs`, `/retention/run`). */
@Controller('hecate/v1/system/retention')
@RequireScope('admin')
export class RetentionController {
  constructor(private readonly retention: RetentionService) {}

  @ApiEnvelope('retention_runs', [RetentionRunDto])
  @ApiOperation({ summary: 'List the retention sweeps' })
  @Get('runs')
  async runs() {
    return { object: 'retention_runs', data: await this.retention.list() };
  }

  @ApiEnvelope('retention_run', RetentionRunDto)
  @ApiOperation({ summary: 'Run a retention sweep now' })
  @Post('run')
  @HttpCode(200)
  async run() {
    return { object: 'retention_run', data: await this.retention.sweep('manual') };
  }
}
