import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ConflictError } from '@core/http/domain-error';
import { noWorkerAnswered, WorkerRequests } from '@core/lease';
import { AdapterCatalog } from './adapter-catalog';
import { ADAPTER_REQUEST, type AdapterAction, type AdapterAnswer, type AdapterHealth, type AdapterRequest, type AdapterRow } from './agent-adapters.types';

/** Adapters are the deployment's, not a tenant's: their requests are stored under this tenant. */
const SYSTEM_TENANT = 'system';

/** Beyond the probe's own ceiling: the queue hand-off, the adapter's teardown and the bus round trip. */
const SLACK_MS = 15_000;

/**
 * `/hecate/v1/agent-adapters`, api side: ids are checked here (404 before any work), the work runs on a worker (an
 * `agent_adapters.request` worker request) and its answer or error comes back as the worker gave it. No worker
 * answering is a 503, never a hang.
 */
@Injectable()
export class AgentAdaptersService {
  constructor(
    private readonly catalog: AdapterCatalog,
    private readonly config: AppConfig,
    private readonly requests: WorkerRequests,
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

  private ask(action: AdapterAction, adapterId?: string): Promise<AdapterAnswer> {
    const waitMs = this.config.agent.adapters.probeTimeoutMs + SLACK_MS;
    const request: AdapterRequest = { action, ...(adapterId ? { adapterId } : {}) };
    return this.requests.ask(
      SYSTEM_TENANT,
      ADAPTER_REQUEST,
      { ...request },
      {
        waitMs,
        noWorker: () =>
          noWorkerAnswered(`no worker answered the agent adapter ${action} within ${Math.round(waitMs / 1000)} s`, {
            userMessage: 'No worker is available to check agent adapters.',
          }),
      },
    ) as Promise<AdapterAnswer>;
  }
}
