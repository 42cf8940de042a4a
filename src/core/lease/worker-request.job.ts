import { Injectable, OnModuleInit } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { WORKER_REQUEST_KINDS } from '@contracts/worker-requests';
import { Declarations } from '@core/discovery/declarations';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { registerWorkerRequestHandlers } from './worker-request-handlers';
import { WorkerRequests } from './worker-requests';

/**
 * The job of every request the api asks a worker to run (on the system queue, or the runs queue): the row's kind picks
 * the handler. Worker role only (docs/style.md rule 16): at boot it hands WorkerRequests every @WorkerRequestHandler of
 * the process, and a kind of the registry (`libs/contracts/src/worker-requests.ts`) with no handler or two stops the
 * boot (docs/style.md rule 3). The api builds no handler.
 */
@Injectable()
export class WorkerRequestJob implements OnModuleInit {
  constructor(
    private readonly requests: WorkerRequests,
    private readonly declarations: Declarations,
  ) {}

  onModuleInit(): void {
    registerWorkerRequestHandlers(this.requests, this.declarations, WORKER_REQUEST_KINDS);
  }

  @JobHandler('worker.request')
  handle(payload: JobPayloads['worker.request'], ctx: JobContext): Promise<void> {
    return this.requests.execute(payload, ctx);
  }

  @JobHandler('worker.request.runs')
  handleOnRuns(payload: JobPayloads['worker.request.runs'], ctx: JobContext): Promise<void> {
    return this.requests.execute(payload, ctx);
  }
}
