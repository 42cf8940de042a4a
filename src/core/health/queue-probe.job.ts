import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { QueueProbeService } from './queue-probe.service';

@Injectable()
export class QueueProbeJob {
  constructor(private readonly probes: QueueProbeService) {}

  @JobHandler('system.echo')
  handle(payload: JobPayloads['system.echo'], ctx: JobContext): Promise<void> {
    return this.probes.execute(payload, ctx);
  }
}
