import { Inject, Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { EventBus } from '@core/bus/event-bus.port';
import { rootLogger } from '@core/logging/logger';
import { JobHandler } from '@core/queue/job-handler.decorator';
import { AdapterCatalog } from './adapter-catalog';
import { AdapterDiscoveryService } from './adapter-discovery.service';
import { adapterReplyChannel } from './agent-adapters.service';
import type { AdapterReply } from './agent-adapters.types';

/** Worker side of `/hecate/v1/agent-adapters`: runs the request and answers on the bus. */
@Injectable()
export class AgentAdaptersJob {
  constructor(
    private readonly catalog: AdapterCatalog,
    private readonly discovery: AdapterDiscoveryService,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  @JobHandler('agent_adapters.request')
  async handle(payload: JobPayloads['agent_adapters.request']): Promise<void> {
    let reply: AdapterReply;
    try {
      reply = await this.run(payload);
    } catch (err) {
      rootLogger().warn({ action: payload.action, adapter_id: payload.adapterId, err: String(err) }, 'agent adapter request failed');
      reply = { ok: false, conflict: payload.action === 'refresh', message: err instanceof Error ? err.message : String(err) };
    }
    await this.bus.publish(adapterReplyChannel(payload.requestId), reply);
  }

  private async run({ action, adapterId }: JobPayloads['agent_adapters.request']): Promise<AdapterReply> {
    if (action === 'list') return { ok: true, rows: await this.discovery.list() };
    const def = this.catalog.require(adapterId ?? '');
    if (action === 'health') return { ok: true, health: await this.discovery.probe(def) };
    if (action === 'refresh') {
      this.discovery.refreshLauncher(def);
      return { ok: true, rows: [await this.discovery.row(def, true)] };
    }
    const health = await this.discovery.probe(def);
    return { ok: true, rows: [await this.discovery.row(def, true)], health };
  }
}
