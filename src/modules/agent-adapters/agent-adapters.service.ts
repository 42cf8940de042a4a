import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorType } from '@contracts/errors';
import { EventBus } from '@core/bus/event-bus.port';
import { AppConfig } from '@core/config/app-config';
import { ConflictError, DomainError } from '@core/http/domain-error';
import { RunQueue } from '@core/queue/run-queue.port';
import { AdapterCatalog } from './adapter-catalog';
import type { AdapterAction, AdapterHealth, AdapterReply, AdapterRow } from './agent-adapters.types';
import { within } from '@core/async/within';

export const adapterReplyChannel = (requestId: string): string => `agent-adapters:reply:${requestId}`;

/** Beyond the probe's own ceiling: the queue hand-off, the adapter's teardown and the bus round trip. */
const SLACK_MS = 15_000;

/**
 * `/hecate/v1/agent-adapters`, api side: ids are checked here (404 before any work), the work runs on a worker (an
 * `agent_adapters.request` job) and its answer comes back on the bus. No worker answering is a 503, never a hang.
 */
@Injectable()
export class AgentAdaptersService {
  constructor(
    private readonly catalog: AdapterCatalog,
    private readonly config: AppConfig,
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async list(): Promise<AdapterRow[]> {
    return (await this.ask('list')).rows ?? [];
  }

  async health(id: string): Promise<AdapterHealth> {
    this.catalog.require(id);
    return (await this.ask('health', id)).health!;
  }

  async probe(id: string): Promise<{ adapter: AdapterRow; health: AdapterHealth }> {
    this.catalog.require(id);
    const r = await this.ask('probe', id);
    return { adapter: r.rows![0], health: r.health! };
  }

  async refreshLauncher(id: string): Promise<AdapterRow[]> {
    const def = this.catalog.require(id);
    if (!def.managed) throw new ConflictError(`agent adapter "${id}" is not managed: it has no launcher to refresh`, { details: { adapter_id: id } });
    return (await this.ask('refresh', id)).rows ?? [];
  }

  private async ask(action: AdapterAction, adapterId?: string): Promise<Extract<AdapterReply, { ok: true }>> {
    const requestId = randomUUID();
    let answer!: (r: AdapterReply) => void;
    const answered = new Promise<AdapterReply>((r) => (answer = r));
    const unsubscribe = await this.bus.subscribe(adapterReplyChannel(requestId), (_c, m) => answer(m as AdapterReply));
    try {
      await this.queue.enqueue('agent_adapters.request', { requestId, action, ...(adapterId ? { adapterId } : {}) }, { jobId: `adapters-${requestId}` });
      const waitMs = this.config.agent.adapters.probeTimeoutMs + SLACK_MS;
      const reply = await within(answered, waitMs);
      if (!reply) {
        throw new DomainError(ErrorType.ServiceUnavailable, 503, `no worker answered the agent adapter ${action} within ${Math.round(waitMs / 1000)} s`, {
          userMessage: 'No worker is available to check agent adapters.',
          operatorAction: 'Check that workers are running (GET /healthz), then retry.',
        });
      }
      if (!reply.ok) {
        if (reply.conflict) throw new ConflictError(reply.message, { details: { adapter_id: adapterId } });
        throw new DomainError(ErrorType.GatewayError, 502, `the worker could not ${action} agent adapters: ${reply.message}`);
      }
      return reply;
    } finally {
      await unsubscribe();
    }
  }
}
