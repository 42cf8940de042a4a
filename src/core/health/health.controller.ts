import { Controller, Get, Res } from '@nestjs/common';
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

  @Public()
  @Get('healthz')
  healthz() {
    return this.health.liveness();
  }

  @Public()
  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const readiness = await this.health.readiness();
    await reply.status(readiness.status === 'error' ? 503 : 200).send(readiness);
  }

  @Public()
  @Get('metrics')
  async metricsText(@Res() reply: FastifyReply) {
    const { contentType, body } = await this.metrics.render();
    await reply.header('content-type', contentType).send(body);
  }
}
