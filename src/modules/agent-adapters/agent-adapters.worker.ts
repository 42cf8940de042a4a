import { Injectable } from '@nestjs/common';
import { ErrorType } from '@contracts/errors';
import { ConflictError, DomainError } from '@core/http/domain-error';
import { WorkerRequestHandler } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { AdapterCatalog } from './adapter-catalog';
import { AdapterDiscoveryService } from './adapter-discovery.service';
import { ADAPTER_REQUEST, type AdapterAnswer, type AdapterRequest } from './agent-adapters.types';

/**
 * Worker side of `/hecate/v1/agent-adapters` (a worker request of kind `agent_adapters.request`): runs the request;
 * a failure answers 409 for a launcher refresh and 502 otherwise, with the worker's message.
 */
@Injectable()
export class AgentAdaptersWorker {
  constructor(
    private readonly catalog: AdapterCatalog,
    private readonly discovery: AdapterDiscoveryService,
  ) {}

  @WorkerRequestHandler(ADAPTER_REQUEST)
  async handle(request: AdapterRequest): Promise<AdapterAnswer> {
    try {
      return await this.run(request);
    } catch (err) {
      const { action, adapterId } = request;
      rootLogger().warn({ action, adapter_id: adapterId, err: String(err) }, 'agent adapter request failed');
      const message = err instanceof Error ? err.message : String(err);
      if (action === 'refresh') throw new ConflictError(message, { details: { adapter_id: adapterId } });
      throw new DomainError(ErrorType.GatewayError, 502, `the worker could not ${action} agent adapters: ${message}`);
    }
  }

  private async run({ action, adapterId }: AdapterRequest): Promise<AdapterAnswer> {
    if (action === 'list') return { rows: await this.discovery.list() };
    const def = this.catalog.require(adapterId ?? '');
    if (action === 'health') return { health: await this.discovery.probe(def) };
    if (action === 'refresh') {
      this.discovery.refreshLauncher(def);
      return { rows: [await this.discovery.row(def, true)] };
    }
    const health = await this.discovery.probe(def);
    return { rows: [await this.discovery.row(def, true)], health };
  }
}
