import { sleep } from '@core/async/sleep';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { busChannels } from '@core/bus/channels';
import { EventBus } from '@core/bus/event-bus.port';
import { NotFoundError } from '@core/http/domain-error';
import { RunQueue } from '@core/queue/run-queue.port';
import type { JobContext } from '@core/queue/run-queue.port';
import { QueueProbeEntity } from './queue-probe.entity';
import { QueueProbeRepository } from './queue-probe.repository';
import { CreateQueueProbeDto, toQueueProbeResponse } from './queue-probe.dto';

/**
 * Queue probes: an operator check that the whole pipeline works (api → queue → worker → Postgres → bus).
 * The row is written first, then the job enqueued; a failed enqueue removes the row and answers 503.
 */
@Injectable()
export class QueueProbeService {
  constructor(
    private readonly probes: QueueProbeRepository,
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async create(tenantId: string, dto: CreateQueueProbeDto) {
    const row: QueueProbeEntity = {
      id: randomUUID(),
      tenantId,
      status: 'queued',
      sleepMs: dto.sleep_ms ?? 0,
      attempts: 0,
      worker: null,
      createdAt: new Date(),
      startedAt: null,
      completedAt: null,
    };
    await this.probes.insert(row);
    try {
      await this.queue.enqueue('system.echo', { token: row.id, sleepMs: row.sleepMs }, { jobId: row.id });
    } catch (err) {
      await this.probes.delete(row.id);
      throw err;
    }
    return toQueueProbeResponse(row);
  }

  async get(tenantId: string, id: string) {
    const row = await this.probes.find({ tenantId, id });
    if (!row) throw new NotFoundError(`queue probe ${id} not found`);
    return toQueueProbeResponse(row);
  }

  /** Worker side. */
  async execute(payload: JobPayloads['system.echo'], ctx: JobContext): Promise<void> {
    const worker = `${hostname()}:${process.pid}`;
    const row = await this.probes.markStarted({ id: payload.token, worker });
    if (!row || row.status === 'completed') return;
    await this.bus.send(busChannels.systemProbe.of(payload.token), { status: 'running', worker, attempts: row.attempts });
    if (payload.sleepMs) {
      await sleep(payload.sleepMs, ctx.signal);
      if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted');
    }
    await this.probes.markCompleted(payload.token);
    await this.bus.send(busChannels.systemProbe.of(payload.token), { status: 'completed', worker, attempts: row.attempts });
  }
}
