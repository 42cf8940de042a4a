import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '@core/http/auth/public.decorator';
import { MetricsService } from '@core/metrics/metrics.service';
import { HealthService } from './health.service';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthService,
    private readonly metrics: MetricsService,
  ) {}

  @ApiOkResponse({
    description: 'Liveness: no dependencies (not wrapped in {object, data}).',
    schema: {
      type: 'object',
      required: ['status', 'time', 'version'],
      properties: { status: { type: 'string' }, time: { type: 'string' }, version: { type: 'string' } },
    },
  })
  @Public()
  @ApiOperation({ summary: 'Check liveness' })
  @Get('healthz')
  healthz() {
    return this.health.liveness();
  }

  @ApiResponse({
    status: 200,
    description: 'Database, Redis (scaled mode) and queue are up (Terminus result).',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiResponse({ status: 503, description: 'A dependency is down.', schema: { type: 'object', additionalProperties: true } })
  @Public()
  @ApiOperation({ summary: 'Check readiness' })
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const readiness = await this.health.readiness();
    await reply.status(readiness.status === 'error' ? 503 : 200).send(readiness);
  }

  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus exposition format.', schema: { type: 'string' } })
  @Public()
  @ApiOperation({ summary: 'Export Prometheus metrics' })
  @Get('metrics')
  async metricsText(@Res() reply: FastifyReply) {
    const { contentType, body } = await this.metrics.render();
    await reply.header('content-type', contentType).send(body);
  }
}
