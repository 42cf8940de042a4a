import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { RunExecutionService } from './run-execution.service';

@Injectable()
export class RunJob {
  constructor(private readonly execution: RunExecutionService) {}

  @JobHandler('run.execute')
  handle(payload: JobPayloads['run.execute'], ctx: JobContext): Promise<void> {
    return this.execution.execute(payload, ctx);
  }
}
