import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { WorkspaceOps } from './workspace-ops';

@Injectable()
export class WorkspaceOpJob {
  constructor(private readonly ops: WorkspaceOps) {}

  @JobHandler('workspace.op')
  handle(payload: JobPayloads['workspace.op'], ctx: JobContext): Promise<void> {
    return this.ops.execute(payload, ctx);
  }
}
