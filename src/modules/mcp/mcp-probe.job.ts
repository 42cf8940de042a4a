import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { McpProbeRunner } from './mcp-probe-runner.service';

@Injectable()
export class McpProbeJob {
  constructor(private readonly runner: McpProbeRunner) {}

  @JobHandler('mcp.probe')
  handle(payload: JobPayloads['mcp.probe'], ctx: JobContext): Promise<void> {
    return this.runner.execute(payload, ctx);
  }
}
