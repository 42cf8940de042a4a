import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { WorkerRequests } from './worker-requests';

/** The job of every request the api asks a worker to run (on the system queue, or the runs queue): the row's kind picks the handler. */
@Injectable()
export class WorkerRequestJob {
  constructor(private readonly requests: WorkerRequests) {}

  @JobHandler('worker.request')
  handle(payload: JobPayloads['worker.request'], ctx: JobContext): Promise<void> {
    return this.requests.execute(payload, ctx);
  }

  @JobHandler('worker.request.runs')
  handleOnRuns(payload: JobPayloads['worker.request.runs'], ctx: JobContext): Promise<void> {
    return this.requests.execute(payload, ctx);
  }
}
