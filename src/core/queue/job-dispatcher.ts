import { Injectable } from '@nestjs/common';
import { Declarations } from '@core/discovery/declarations';
import { JobName, JobPayloads, jobsOfQueue, QueueName } from '@contracts/jobs';
import { JOB_HANDLER_METADATA } from './job-handler.decorator';
import type { JobContext } from './run-queue.port';

type Handler = (payload: unknown, ctx: JobContext) => Promise<unknown>;

export class JobRegistryError extends Error {
  constructor(problems: string[]) {
    super(`job registry is inconsistent:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'JobRegistryError';
  }
}

/** Finds every @JobHandler at boot and fails if a consumed job has no handler or two. */
@Injectable()
export class JobDispatcher {
  private readonly handlers = new Map<JobName, Handler>();

  constructor(private readonly declarations: Declarations) {}

  discover(consumedQueues: QueueName[]): void {
    const found = new Map<JobName, { handler: Handler; where: string }[]>();
    for (const { meta: name, call, where } of this.declarations.methods<JobName>(JOB_HANDLER_METADATA)) {
      const list = found.get(name) ?? [];
      list.push({ handler: call as Handler, where });
      found.set(name, list);
    }
    const problems: string[] = [];
    for (const [name, list] of found) {
      if (list.length > 1) problems.push(`job "${name}" has ${list.length} handlers: ${list.map((l) => l.where).join(', ')}`);
    }
    for (const queue of consumedQueues) {
      for (const name of jobsOfQueue(queue)) {
        if (!found.has(name)) problems.push(`job "${name}" (queue "${queue}") has no handler`);
      }
    }
    if (problems.length > 0) throw new JobRegistryError(problems);
    for (const [name, list] of found) this.handlers.set(name, list[0].handler);
  }

  readonly dispatch = async <N extends JobName>(name: N, payload: JobPayloads[N], ctx: JobContext): Promise<void> => {
    const handler = this.handlers.get(name);
    if (!handler) throw new Error(`no handler for job "${name}"`);
    await handler(payload, ctx);
  };
}
